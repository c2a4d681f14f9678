#ifndef FATCHAT_CNCURSES_SHIM_H
#define FATCHAT_CNCURSES_SHIM_H

/* SwiftPM drops the -D flags pkg-config gives; without this Swift sees no
   wide-character API (wget_wch, setcchar, cchar_t). _XOPEN_SOURCE is not set
   here: it changes glibc's struct layouts against the other modules. */
#define NCURSES_WIDECHAR 1

#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include <wchar.h>
#include <ncursesw/curses.h>

/* Attribute macros Swift cannot import. */
static inline attr_t fatchat_a_normal(void) { return A_NORMAL; }
static inline attr_t fatchat_a_bold(void) { return A_BOLD; }
static inline attr_t fatchat_a_reverse(void) { return A_REVERSE; }
static inline attr_t fatchat_a_underline(void) { return A_UNDERLINE; }
static inline attr_t fatchat_a_dim(void) { return A_DIM; }

/* KEY_F(n) is a macro with an argument. */
static inline int fatchat_key_f(int n) { return KEY_F(n); }

/* Globals that Swift 6 rejects as not concurrency-safe. */
static inline WINDOW *fatchat_stdscr(void) { return stdscr; }
static inline int fatchat_colors(void) { return COLORS; }
static inline int fatchat_color_pairs(void) { return COLOR_PAIRS; }
static inline FILE *fatchat_stdout(void) { return stdout; }
static inline FILE *fatchat_stdin(void) { return stdin; }

/* Mouse: the mask macros are computed, so Swift cannot import them. One call reads the
   event that KEY_MOUSE announced and says what it was: 1 wheel up, 2 wheel down, 3 a press
   or click of the first button, 0 anything else (or no event); row and column through the pointers. */
static inline int fatchat_mouse_on(void) {
    mouseinterval(0);
    /* Every button event, not only the ones used: given an event outside its mask (a release,
       a right click), ncurses 6.4 reads on for the next one with a blocking read(), and the
       client froze until the next key. */
    return mousemask(ALL_MOUSE_EVENTS, NULL) != 0;
}
static inline void fatchat_mouse_off(void) { mousemask(0, NULL); }
static inline int fatchat_key_mouse(void) { return KEY_MOUSE; }
static inline int fatchat_read_mouse(int *row, int *column) {
    MEVENT event;
    if (getmouse(&event) != OK) return 0;
    *row = event.y;
    *column = event.x;
    if (event.bstate & BUTTON4_PRESSED) return 1;
    if (event.bstate & BUTTON5_PRESSED) return 2;
    if (event.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)) return 3;
    return 0;
}

/* wcwidth is declared by <wchar.h> only under _XOPEN_SOURCE. */
extern int wcwidth(wchar_t c);
static inline int fatchat_wcwidth(unsigned int c) { return wcwidth((wchar_t)c); }

/* Draw one cell from up to 5 code points (CCHARW_MAX); setcchar takes a wchar_t array. */
static inline int fatchat_put_cell(WINDOW *win, int y, int x, const unsigned int *chars, int count,
                                   attr_t attrs, short pair) {
    wchar_t wch[CCHARW_MAX + 1];
    int n = count < CCHARW_MAX ? count : CCHARW_MAX;
    for (int i = 0; i < n; i++) wch[i] = (wchar_t)chars[i];
    wch[n] = 0;
    cchar_t cell;
    if (setcchar(&cell, wch, attrs, pair, NULL) != OK) return ERR;
    return mvwadd_wch(win, y, x, &cell);
}

/* A signal handler may only write to a pipe (async-signal-safe); the main
   loop polls the pipe and restores the terminal itself. The descriptor lives
   in a static of this header, which is set and read by the same copy of the
   inline functions below.

   SIGWINCH goes to the pipe too, after curses' own handler has run: that
   handler only sets a flag that the next read turns into KEY_RESIZE, and
   without the byte in the pipe a resize that lands while the loop is busy,
   or on another thread, would wait for the next key. */
static int fatchat_signal_write_fd = -1;
/* Curses' SIGWINCH action, kept in a function's static: a bare static struct in this
   header is not emitted for Swift, and the link fails. */
static inline struct sigaction *fatchat_curses_winch(void) {
    static struct sigaction action;
    return &action;
}

static void fatchat_signal_handler(int signo, siginfo_t *info, void *context) {
    if (signo == SIGWINCH) {
        struct sigaction *curses = fatchat_curses_winch();
        if (curses->sa_flags & SA_SIGINFO) {
            if (curses->sa_sigaction != NULL) curses->sa_sigaction(signo, info, context);
        } else if (curses->sa_handler != SIG_DFL && curses->sa_handler != SIG_IGN) {
            curses->sa_handler(signo);
        }
    }
    unsigned char byte = (unsigned char)signo;
    if (fatchat_signal_write_fd >= 0) {
        int saved = errno;
        ssize_t ignored = write(fatchat_signal_write_fd, &byte, 1);
        (void)ignored;
        errno = saved;
    }
}

/* Route SIGTERM, SIGHUP, SIGINT and SIGWINCH to `write_fd`; call it once curses is set up,
   so that its SIGWINCH handler is the one kept. Returns 0 on success. */
static inline int fatchat_route_signals(int write_fd) {
    fatchat_signal_write_fd = write_fd;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = fatchat_signal_handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_SIGINFO;
    int result = 0;
    result |= sigaction(SIGTERM, &action, NULL);
    result |= sigaction(SIGHUP, &action, NULL);
    result |= sigaction(SIGINT, &action, NULL);
    /* Curses' action is kept before ours goes in, so a resize at once still reaches it.
       Routed twice, the action found is ours: keeping it would make the handler call itself. */
    struct sigaction current;
    result |= sigaction(SIGWINCH, NULL, &current);
    if (!((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == fatchat_signal_handler)) {
        *fatchat_curses_winch() = current;
    }
    result |= sigaction(SIGWINCH, &action, NULL);
    return result;
}

/* Give SIGTERM, SIGHUP and SIGINT back their default actions, and SIGWINCH to curses. */
static inline void fatchat_unroute_signals(void) {
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    (void)sigaction(SIGWINCH, fatchat_curses_winch(), NULL);
    fatchat_signal_write_fd = -1;
}

/* A crash (SIGSEGV, SIGILL, SIGABRT, SIGBUS, SIGTRAP, SIGFPE) cannot call endwin: curses is
   not async-signal-safe. The handler instead writes bytes prepared while the terminal was set
   up (attributes off, cursor on, keypad off, leave the alternate screen, bracketed paste off),
   puts back the modes saved before curses changed them, and re-raises the signal with its
   default action, so that the exit status still names the signal. write, tcsetattr, signal
   and raise are async-signal-safe. As with the pipe above, this state is static: prepare,
   install and remove it from one Swift file, so that all of them use the same copy, which
   lives in one function's static. */
#define FATCHAT_CRASH_SIGNALS 6
static const int fatchat_crash_signals[FATCHAT_CRASH_SIGNALS] = { SIGSEGV, SIGILL, SIGABRT, SIGBUS, SIGTRAP, SIGFPE };

struct fatchat_crash_state {
    struct termios modes;
    int modes_saved;
    char bytes[512];
    size_t length;
    struct sigaction previous[FATCHAT_CRASH_SIGNALS];
    int installed;
    /* A stack overflow leaves no stack to run a handler on; this is the main thread's spare. */
    char stack[65536];
};

static inline struct fatchat_crash_state *fatchat_crash(void) {
    static struct fatchat_crash_state state;
    return &state;
}

static void fatchat_crash_handler(int signo) {
    struct fatchat_crash_state *crash = fatchat_crash();
    size_t done = 0;
    while (done < crash->length) {
        ssize_t n = write(STDOUT_FILENO, crash->bytes + done, crash->length - done);
        if (n <= 0) break;
        done += (size_t)n;
    }
    if (crash->modes_saved) (void)tcsetattr(STDIN_FILENO, TCSANOW, &crash->modes);
    signal(signo, SIG_DFL);
    raise(signo);
}

/* Saves the terminal's modes on `fd`; call it before curses changes them. Returns 0 on success. */
static inline int fatchat_crash_save_modes(int fd) {
    struct fatchat_crash_state *crash = fatchat_crash();
    crash->modes_saved = tcgetattr(fd, &crash->modes) == 0;
    return crash->modes_saved ? 0 : -1;
}

static inline void fatchat_crash_append(const char *bytes) {
    struct fatchat_crash_state *crash = fatchat_crash();
    if (bytes == NULL || bytes == (const char *)-1) return;
    size_t n = strlen(bytes);
    if (n > sizeof crash->bytes - crash->length) return;
    memcpy(crash->bytes + crash->length, bytes, n);
    crash->length += n;
}

/* Prepares what the handler writes, from the current terminal's description, then `extra`. */
static inline void fatchat_crash_prepare(const char *extra) {
    fatchat_crash()->length = 0;
    const char *capabilities[] = { "sgr0", "cnorm", "rmkx", "rmcup" };
    for (int i = 0; i < 4; i++) fatchat_crash_append(tigetstr((char *)capabilities[i]));
    fatchat_crash_append(extra);
}

/* Installs the crash handler, keeping the handlers it replaces. Returns 0 on success. */
static inline int fatchat_crash_install(void) {
    struct fatchat_crash_state *crash = fatchat_crash();
    if (crash->installed) return 0;
    stack_t current;
    if (sigaltstack(NULL, &current) == 0 && (current.ss_flags & SS_DISABLE)) {
        stack_t spare;
        spare.ss_sp = crash->stack;
        spare.ss_size = sizeof crash->stack;
        spare.ss_flags = 0;
        (void)sigaltstack(&spare, NULL);
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = fatchat_crash_handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_ONSTACK | SA_RESETHAND;
    int result = 0;
    for (int i = 0; i < FATCHAT_CRASH_SIGNALS; i++) {
        result |= sigaction(fatchat_crash_signals[i], &action, &crash->previous[i]);
    }
    crash->installed = 1;
    return result;
}

/* Puts back the handlers the crash handler replaced; once the terminal is restored. */
static inline void fatchat_crash_uninstall(void) {
    struct fatchat_crash_state *crash = fatchat_crash();
    if (!crash->installed) return;
    for (int i = 0; i < FATCHAT_CRASH_SIGNALS; i++) {
        (void)sigaction(fatchat_crash_signals[i], &crash->previous[i], NULL);
    }
    crash->installed = 0;
}

#endif
