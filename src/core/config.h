/*
 * The configuration: one table of TANDEM_* variables (config_table.h) read by
 * one parser. The parser needs no MPI, so it is unit-tested on its own.
 */
#ifndef TDM_CONFIG_H
#define TDM_CONFIG_H

#include <stddef.h>

typedef enum {
    TDM_CONFIG_BOOL,
    TDM_CONFIG_INT,
    TDM_CONFIG_SIZE,
    TDM_CONFIG_ENUM,
    TDM_CONFIG_STRING
} tdm_config_type;

/* The value of a SIZE variable set to its word (see choices): the component
   that reads it chooses. */
#define TDM_CONFIG_AUTO (-1LL)

typedef struct {
    const char *name; /* environment variable, "TANDEM_..." */
    tdm_config_type type;
    const char *default_text; /* the default, written as a user would */
    long long min, max;       /* accepted range of INT and SIZE */
    const char *choices;      /* "a|b|c" for ENUM; for SIZE, an optional word that
                                 stands for TDM_CONFIG_AUTO ("auto"); else NULL */
    const char *description;  /* one line, for the docs and --help */
    const char *when;         /* one line: where another value is better, as measured,
                                 or what the switch is for (docs/ENVIRONMENT.md) */
} tdm_config_spec;

/* A parsed value: 'number' for BOOL (0/1), INT, SIZE (bytes) and ENUM (index of
   the choice); 'text' for STRING. 'from_env' tells whether the user set it. */
typedef struct {
    long long number;
    const char *text;
    int from_env;
} tdm_config_value;

/* Receives each warning of the parser, one line without a newline. */
typedef void (*tdm_config_warn_fn)(void *context, const char *message);

/* Parse 'table' against 'env' (a NULL-terminated environ-style array) into
   'values' (one per table entry). A bad value keeps the default and produces a
   warning naming the variable, the value and what is accepted; an unknown
   TANDEM_* variable produces a warning with the closest known name. Returns
   the number of warnings. Any thread; does not keep 'env' beyond STRING texts. */
int tdm_config_parse(const tdm_config_spec *table, size_t count, char *const *env,
                     tdm_config_value *values, tdm_config_warn_fn warn, void *context);

/* Write the value as a user would set it ("1", "64k", "proxy") into buf. */
void tdm_config_format(const tdm_config_spec *spec, const tdm_config_value *value, char *buf,
                       size_t size);

/* Describe what a variable accepts, e.g. "an integer from 0 to 2". */
void tdm_config_accepted(const tdm_config_spec *spec, char *buf, size_t size);

/* Parse a byte count as a SIZE variable takes it ("4096", "64k", "1m").
   Returns 0 on success. */
int tdm_config_parse_size(const char *text, long long *out);

/* Tandem's own table, in config_table.h order. */
enum {
#define TDM_CONFIG(id, name, type, def, min, max, choices, desc, when) TDM_CFG_##id,
#include "core/config_table.h"
#undef TDM_CONFIG
    TDM_CFG_COUNT
};
extern const tdm_config_spec tdm_config_table[TDM_CFG_COUNT];

/* The values of Tandem's table, filled by tdm_config_load(). */
extern tdm_config_value tdm_config[TDM_CFG_COUNT];

/* Read the process environment into tdm_config; warnings go to 'warn'. */
int tdm_config_load(tdm_config_warn_fn warn, void *context);

#define TDM_CONFIG_NUMBER(id) (tdm_config[TDM_CFG_##id].number)

#endif
