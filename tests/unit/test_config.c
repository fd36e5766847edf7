/* Unit tests of the configuration parser (no MPI): every type, good and bad
   values, unknown names, and Tandem's own table. */
#include <stdio.h>
#include <string.h>

#include "core/config.h"
#include "unit.h"

static char warnings[16][512];
static int nwarnings;

static void collect(void *context, const char *message)
{
    (void)context;
    if (nwarnings < 16)
        snprintf(warnings[nwarnings++], sizeof warnings[0], "%s", message);
}

static const tdm_config_spec table[] = {
    {"TANDEM_FLAG", TDM_CONFIG_BOOL, "0", 0, 1, NULL, "a flag", "use"},
    {"TANDEM_LEVEL", TDM_CONFIG_INT, "3", 0, 10, NULL, "a level", "use"},
    {"TANDEM_LIMIT", TDM_CONFIG_SIZE, "64k", 0, 1LL << 30, "auto", "a size", "use"},
    {"TANDEM_MODE", TDM_CONFIG_ENUM, "proxy", 0, 0, "drive|proxy|off", "a mode", "use"},
    {"TANDEM_PATH", TDM_CONFIG_STRING, "out", 0, 0, NULL, "a path", "use"},
};
enum { FLAG, LEVEL, LIMIT, MODE, PATH, COUNT };

static int parse(char **env, tdm_config_value *values)
{
    nwarnings = 0;
    return tdm_config_parse(table, COUNT, env, values, collect, NULL);
}

static int warned(const char *needle)
{
    for (int i = 0; i < nwarnings; i++)
        if (strstr(warnings[i], needle))
            return 1;
    return 0;
}

int main(void)
{
    tdm_config_value v[COUNT];
    char buf[128];

    /* Defaults. */
    char *none[] = {"PATH=/bin", NULL};
    EXPECT(parse(none, v) == 0);
    EXPECT(v[FLAG].number == 0 && v[LEVEL].number == 3 && v[LIMIT].number == 65536);
    EXPECT(v[MODE].number == 1 && strcmp(v[PATH].text, "out") == 0);
    EXPECT(!v[FLAG].from_env);

    /* Good values of every type. */
    char *good[] = {"TANDEM_FLAG=yes", "TANDEM_LEVEL=10",    "TANDEM_LIMIT=2M",
                    "TANDEM_MODE=OFF", "TANDEM_PATH=/tmp/x", NULL};
    EXPECT(parse(good, v) == 0);
    EXPECT(v[FLAG].number == 1 && v[FLAG].from_env);
    EXPECT(v[LEVEL].number == 10);
    EXPECT(v[LIMIT].number == 2 * 1024 * 1024);
    EXPECT(v[MODE].number == 2);
    EXPECT(strcmp(v[PATH].text, "/tmp/x") == 0);
    tdm_config_format(&table[LIMIT], &v[LIMIT], buf, sizeof buf);
    EXPECT(strcmp(buf, "2m") == 0);
    tdm_config_format(&table[MODE], &v[MODE], buf, sizeof buf);
    EXPECT(strcmp(buf, "off") == 0);
    char *sizes[] = {"TANDEM_LIMIT=64KiB", "TANDEM_FLAG=off", NULL};
    EXPECT(parse(sizes, v) == 0 && v[LIMIT].number == 65536 && v[FLAG].number == 0);
    char *automatic[] = {"TANDEM_LIMIT=Auto", NULL}; /* the word of a size: Tandem chooses */
    EXPECT(parse(automatic, v) == 0 && v[LIMIT].number == TDM_CONFIG_AUTO);
    tdm_config_format(&table[LIMIT], &v[LIMIT], buf, sizeof buf);
    EXPECT(strcmp(buf, "auto") == 0);

    /* Bad values keep the default and name the variable, value and accepted range. */
    char *bad[] = {"TANDEM_FLAG=maybe", "TANDEM_LEVEL=11", "TANDEM_LIMIT=12q",
                   "TANDEM_MODE=fast",  "TANDEM_LEVEL=",   NULL};
    EXPECT(parse(bad, v) == 5);
    EXPECT(v[FLAG].number == 0 && v[LEVEL].number == 3 && v[LIMIT].number == 65536);
    EXPECT(v[MODE].number == 1);
    EXPECT(warned("TANDEM_FLAG=maybe is not valid: expected 1/true/yes/on or 0/false/no/off; "
                  "using the default 0"));
    EXPECT(warned("TANDEM_LEVEL=11 is not valid: expected an integer from 0 to 10"));
    EXPECT(warned("TANDEM_LIMIT=12q is not valid: expected auto or a size in bytes from 0 to 1g"));
    EXPECT(warned("TANDEM_MODE=fast is not valid: expected one of drive, proxy, off; using the "
                  "default proxy"));
    EXPECT(warned("TANDEM_LEVEL= is not valid"));
    char *overflow[] = {"TANDEM_LEVEL=99999999999999999999", "TANDEM_LIMIT=-1", NULL};
    EXPECT(parse(overflow, v) == 2 && v[LEVEL].number == 3 && v[LIMIT].number == 65536);

    /* Unknown names: the closest known name, or a pointer to the docs. */
    char *unknown[] = {"TANDEM_LEVLE=1", "TANDEM_COMPLETELY_DIFFERENT=1",
                       "TANDEM_FOO=1",   "TANDEM_LIMT=1",
                       "TANDEM_PAT=1",   NULL};
    EXPECT(parse(unknown, v) == 5);
    EXPECT(warned("unknown variable TANDEM_LEVLE; did you mean TANDEM_LEVEL?"));
    EXPECT(warned("unknown variable TANDEM_LIMT; did you mean TANDEM_LIMIT?"));
    EXPECT(warned("unknown variable TANDEM_PAT; did you mean TANDEM_PATH?"));
    EXPECT(warned("unknown variable TANDEM_COMPLETELY_DIFFERENT; the TANDEM_* variables are "
                  "listed in docs/ENVIRONMENT.md"));
    /* three letters from TANDEM_MODE: an unrelated name is no suggestion */
    EXPECT(warned("unknown variable TANDEM_FOO; the TANDEM_* variables are listed in "
                  "docs/ENVIRONMENT.md"));

    /* Tandem's own table: every default parses and formats back. */
    EXPECT(tdm_config_parse(tdm_config_table, TDM_CFG_COUNT, none, tdm_config, collect, NULL) == 0);
    for (int i = 0; i < TDM_CFG_COUNT; i++) {
        tdm_config_format(&tdm_config_table[i], &tdm_config[i], buf, sizeof buf);
        EXPECT(strcmp(buf, tdm_config_table[i].default_text) == 0);
        EXPECT(strncmp(tdm_config_table[i].name, "TANDEM_", 7) == 0);
        /* each variable says when to set it: a measured case or its use */
        EXPECT(tdm_config_table[i].when && *tdm_config_table[i].when);
    }

    UNIT_REPORT();
    return failures ? 1 : 0;
}
