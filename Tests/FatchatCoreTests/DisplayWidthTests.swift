import Testing
@testable import FatchatCore

@Suite struct DisplayWidthTests {
    @Test func asciiIsOneCell() {
        #expect(DisplayWidth.of("a" as Character) == 1)
        #expect(DisplayWidth.of("hello") == 5)
    }

    @Test func cjkIsTwoCells() {
        #expect(DisplayWidth.of("你" as Character) == 2)
        #expect(DisplayWidth.of("你好世界") == 8)
        #expect(DisplayWidth.of("한국어") == 6)
        #expect(DisplayWidth.of("ｶﾀｶﾅ") == 4)     // halfwidth katakana stays narrow
        #expect(DisplayWidth.of("Ａ" as Character) == 2)   // fullwidth A
    }

    @Test func zwjFamilyIsOneClusterOfTwoCells() {
        let family = "👨‍👩‍👧"
        #expect(family.count == 1)
        #expect(DisplayWidth.of(family) == 2)
    }

    @Test func variationSelector16MakesEmojiWide() {
        #expect(DisplayWidth.of("❤️") == 2)
        #expect(DisplayWidth.of("❤") == 1)      // text presentation without VS16
        #expect(DisplayWidth.of("🍕") == 2)
        #expect(DisplayWidth.of("1️⃣") == 2)     // keycap
        #expect(DisplayWidth.of("🇫🇷") == 2)    // flag
        #expect(DisplayWidth.of("👍🏽") == 2)    // skin tone
    }

    @Test func combiningMarksAddNothing() {
        let decomposed = "e\u{301}"
        #expect(decomposed.count == 1)
        #expect(DisplayWidth.of(decomposed) == 1)
        #expect(DisplayWidth.of("Z\u{351}\u{36B}\u{343}\u{36A}a") == 2)
    }

    @Test func controlsAreZero() {
        #expect(DisplayWidth.of("\u{1B}" as Character) == 0)
        #expect(DisplayWidth.of("\u{9B}" as Character) == 0)
        #expect(DisplayWidth.of("\u{200B}" as Character) == 0)
    }

    @Test func prefixNeverSplitsAWideCharacter() {
        #expect(DisplayWidth.prefix("ab你好", fitting: 3) == "ab")
        #expect(DisplayWidth.prefix("ab你好", fitting: 4) == "ab你")
    }
}
