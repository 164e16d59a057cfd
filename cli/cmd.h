/*
 * cmd.h - kubectl-ota's commands, a file each (cmd_*.c); main.c
 * dispatches to them.  Each returns the exit code (podview.h, cli_exit)
 * after printing what it did or why it could not.
 */
#ifndef OTA_CLI_CMD_H
#define OTA_CLI_CMD_H

#include "app.h"

/* Re-read and decide again after a conflict (409) this many times at most. */
#define CLI_WRITE_ATTEMPTS 5
/* How often upgrade --wait and status --watch look again. */
#define CLI_WAIT_POLL_NS (200 * 1000000ull)
#define CLI_WATCH_POLL_NS (500 * 1000000ull)

int cli_cmd_list(cli_app *a);
int cli_cmd_pull(cli_app *a);
int cli_cmd_status(cli_app *a);
int cli_cmd_upgrade(cli_app *a);

#endif
