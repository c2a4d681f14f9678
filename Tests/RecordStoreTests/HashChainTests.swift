import Foundation
@testable import RecordStore
import Testing

/// The hash chain heartbeats prove themselves with: each step's link hashes to the one before it, and
/// nothing but the right link, that many steps on, does.
struct HashChainTests {
    @Test func eachLinkFollowsTheEarlierOnesAndNothingElseDoes() throws {
        let chain = HashChain(length: 200)
        #expect(chain.link(at: 0) == chain.tip)
        #expect(chain.link(at: -1) == nil && chain.link(at: 201) == nil)
        for (earlier, later) in [(0, 1), (0, 6), (5, 70), (63, 64), (64, 199), (0, 200), (130, 130)] {
            let known = try #require(chain.link(at: earlier)), link = try #require(chain.link(at: later))
            #expect(HashChain.follows(link, steps: later - earlier, from: known), "step \(later) from \(earlier)")
            if later > earlier {
                #expect(!HashChain.follows(link, steps: later - earlier - 1, from: known), "one step short, \(later) from \(earlier)")
                #expect(!HashChain.follows(known, steps: later - earlier, from: link), "backwards, \(earlier) from \(later)")
            }
        }
        let other = HashChain(length: 200)
        #expect(other.tip != chain.tip, "each chain starts from a secret of its own")
        #expect(!HashChain.follows(try #require(other.link(at: 3)), steps: 3, from: chain.tip))
        #expect(!HashChain.follows(Data(count: 5), steps: 0, from: chain.tip), "a link of the wrong size")
        #expect(!HashChain.follows(chain.tip, steps: HashChain.maximumLength + 1, from: chain.tip), "more steps than any chain has")
    }
}
