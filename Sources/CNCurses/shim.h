#ifndef FATCHAT_CNCURSES_SHIM_H
#define FATCHAT_CNCURSES_SHIM_H

/* SwiftPM drops the -D flags pkg-config gives; without this Swift sees no
   wide-character API (wget_wch, setcchar, cchar_t). _XOPEN_SOURCE is not set
   here: it changes glibc's struct layouts against the other modules. */
#define NCURSES_WIDECHAR 1

#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
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
   inline functions below. */
static int fatchat_signal_write_fd = -1;

static void fatchat_signal_handler(int signo) {
    unsigned char byte = (unsigned char)signo;
    if (fatchat_signal_write_fd >= 0) {
        ssize_t ignored = write(fatchat_signal_write_fd, &byte, 1);
        (void)ignored;
    }
}

/* Route SIGTERM, SIGHUP and SIGINT to `write_fd`; returns 0 on success. */
static inline int fatchat_route_signals(int write_fd) {
    fatchat_signal_write_fd = write_fd;
    struct sigaction action;
    action.sa_handler = fatchat_signal_handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;
    int result = 0;
    result |= sigaction(SIGTERM, &action, NULL);
    result |= sigaction(SIGHUP, &action, NULL);
    result |= sigaction(SIGINT, &action, NULL);
    return result;
}

/* Give SIGTERM, SIGHUP and SIGINT back their default actions. */
static inline void fatchat_unroute_signals(void) {
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    fatchat_signal_write_fd = -1;
}

#endif
