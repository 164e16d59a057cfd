/*
 * main.c - kubectl-ota: the node users' kubectl plugin (docs/node-users.md).
 *
 * Dispatch only: the command line (args.c), --help and --version, then the
 * command, a file each (cmd_*.c), on the cluster and client app.c opens.
 */
#include <stdio.h>

#include "app.h"
#include "cmd.h"
#include "format.h"
#include "log.h"
#include "podview.h"
#include "version.h"

int main(int argc, char **argv)
{
    static cli_app a;
    char err[512];
    if (cli_args_parse(argc, argv, &a.args, err, sizeof(err)) != 0) {
        cli_errorf("%s", err);
        fprintf(stderr, "See 'kubectl ota --help' for usage.\n");
        return CLI_EXIT_USAGE;
    }
    if (a.args.command == CLI_CMD_HELP) {
        fputs(cli_usage(), stdout);
        return CLI_EXIT_OK;
    }
    if (a.args.command == CLI_CMD_VERSION) {
        printf("kubectl-ota %s (commit %s)\n", OTA_VERSION, OTA_COMMIT);
        return CLI_EXIT_OK;
    }
    log_set_level(LOG_ERROR); /* the client's retries are not the user's business */
    a.user_agent = "kubectl-ota/" OTA_VERSION " ota-prepull/" OTA_COMMIT;
    int rc = cli_app_open(&a);
    if (rc != 0)
        return rc;
    switch (a.args.command) {
    case CLI_CMD_LIST:
        rc = cli_cmd_list(&a);
        break;
    case CLI_CMD_PULL:
        rc = cli_cmd_pull(&a);
        break;
    case CLI_CMD_STATUS:
        rc = cli_cmd_status(&a);
        break;
    case CLI_CMD_UPGRADE:
        rc = cli_cmd_upgrade(&a);
        break;
    default:
        rc = CLI_EXIT_USAGE;
        break;
    }
    cli_app_close(&a);
    return rc;
}
