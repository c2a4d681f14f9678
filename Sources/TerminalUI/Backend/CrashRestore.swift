import CNCurses
import Foundation

/// Leaves the terminal usable when the client dies on a signal it cannot survive
/// (SIGSEGV, SIGILL, SIGABRT, SIGBUS, SIGTRAP, SIGFPE; a Swift trap is SIGILL or SIGTRAP).
///
/// `endwin` cannot run in a signal handler, so the handler in the CNCurses shim writes bytes
/// prepared here (leave the alternate screen, cursor on, bracketed paste off), puts back the
/// modes saved here, and re-raises the signal with its default action. The shim keeps that
/// state in statics of its header, one copy per object file: only this file touches it.
enum CrashRestore {
    /// Saves the terminal's modes; call it before curses changes them.
    static func saveModes() {
        _ = fatchat_crash_save_modes(STDIN_FILENO)
    }

    /// Prepares the bytes from the terminal's description, plus `extra`, and installs the
    /// handler; call it once curses has set the terminal up.
    static func arm(extra: String) {
        extra.withCString { fatchat_crash_prepare($0) }
        _ = fatchat_crash_install()
    }

    /// Puts the previous handlers back, when the terminal is restored the ordinary way.
    static func disarm() {
        fatchat_crash_uninstall()
    }
}
