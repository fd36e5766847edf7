/*
 * The one parser of TANDEM_* variables. It reads the table in config_table.h,
 * keeps the default for any bad value and says so, and points out misspelt
 * variable names. Nothing here needs MPI.
 */
#include "core/config.h"

#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PREFIX "TANDEM_"

const tdm_config_spec tdm_config_table[TDM_CFG_COUNT] = {
#define TDM_CONFIG(id, name, type, def, min, max, choices, desc, when) \
    {name, TDM_CONFIG_##type, def, min, max, choices, desc, when},
#include "core/config_table.h"
#undef TDM_CONFIG
};

tdm_config_value tdm_config[TDM_CFG_COUNT];

static const char *const true_words[] = {"1", "true", "yes", "on", NULL};
static const char *const false_words[] = {"0", "false", "no", "off", NULL};

static int word_in(const char *text, const char *const *words)
{
    for (; *words; words++)
        if (strcasecmp(text, *words) == 0)
            return 1;
    return 0;
}

/* Parse a decimal integer with an optional binary suffix (k, m, g) when
   'with_suffix' is set. Returns 0 on success. */
static int parse_number(const char *text, int with_suffix, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || errno == ERANGE)
        return -1;
    if (with_suffix && *end) {
        long long scale = 1;
        switch (tolower((unsigned char)*end)) {
        case 'k': scale = 1LL << 10; break;
        case 'm': scale = 1LL << 20; break;
        case 'g': scale = 1LL << 30; break;
        default: return -1;
        }
        end++;
        if (tolower((unsigned char)*end) == 'i') /* accept KiB-style "64ki" too */
            end++;
        if (tolower((unsigned char)*end) == 'b')
            end++;
        if (v > LLONG_MAX / scale || v < -(LLONG_MAX / scale))
            return -1;
        v *= scale;
    }
    if (*end)
        return -1;
    *out = v;
    return 0;
}

int tdm_config_parse_size(const char *text, long long *out)
{
    return parse_number(text, 1, out);
}

/* Index of 'text' among the '|'-separated choices, or -1. */
static int choice_index(const char *choices, const char *text)
{
    int index = 0;
    size_t len = strlen(text);
    for (const char *p = choices; p && *p; index++) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && strncasecmp(p, text, n) == 0)
            return index;
        p = bar ? bar + 1 : NULL;
    }
    return -1;
}

/* The index-th choice, copied into buf. */
static void choice_name(const char *choices, long long index, char *buf, size_t size)
{
    const char *p = choices;
    for (long long i = 0; p && i < index; i++) {
        p = strchr(p, '|');
        if (p)
            p++;
    }
    if (!p) {
        snprintf(buf, size, "?");
        return;
    }
    const char *bar = strchr(p, '|');
    int n = bar ? (int)(bar - p) : (int)strlen(p);
    snprintf(buf, size, "%.*s", n, p);
}

static void format_size(long long v, char *buf, size_t size)
{
    if (v != 0 && v % (1LL << 30) == 0)
        snprintf(buf, size, "%lldg", v >> 30);
    else if (v != 0 && v % (1LL << 20) == 0)
        snprintf(buf, size, "%lldm", v >> 20);
    else if (v != 0 && v % (1LL << 10) == 0)
        snprintf(buf, size, "%lldk", v >> 10);
    else
        snprintf(buf, size, "%lld", v);
}

void tdm_config_accepted(const tdm_config_spec *spec, char *buf, size_t size)
{
    char lo[32], hi[32];
    switch (spec->type) {
    case TDM_CONFIG_BOOL: snprintf(buf, size, "1/true/yes/on or 0/false/no/off"); break;
    case TDM_CONFIG_INT:
        snprintf(buf, size, "an integer from %lld to %lld", spec->min, spec->max);
        break;
    case TDM_CONFIG_SIZE:
        format_size(spec->min, lo, sizeof lo);
        format_size(spec->max, hi, sizeof hi);
        snprintf(buf, size, "%s%sa size in bytes from %s to %s (suffix k, m or g allowed)",
                 spec->choices ? spec->choices : "", spec->choices ? " or " : "", lo, hi);
        break;
    case TDM_CONFIG_ENUM: {
        /* "one of drive, proxy, off" */
        size_t used = (size_t)snprintf(buf, size, "one of ");
        for (const char *p = spec->choices; p && *p && used < size;) {
            const char *bar = strchr(p, '|');
            int n = bar ? (int)(bar - p) : (int)strlen(p);
            used += (size_t)snprintf(buf + used, size - used, "%.*s%s", n, p, bar ? ", " : "");
            p = bar ? bar + 1 : NULL;
        }
        break;
    }
    case TDM_CONFIG_STRING: snprintf(buf, size, "any text"); break;
    }
}

void tdm_config_format(const tdm_config_spec *spec, const tdm_config_value *value, char *buf,
                       size_t size)
{
    switch (spec->type) {
    case TDM_CONFIG_BOOL:
    case TDM_CONFIG_INT: snprintf(buf, size, "%lld", value->number); break;
    case TDM_CONFIG_SIZE:
        if (value->number == TDM_CONFIG_AUTO && spec->choices)
            snprintf(buf, size, "%s", spec->choices);
        else
            format_size(value->number, buf, size);
        break;
    case TDM_CONFIG_ENUM: choice_name(spec->choices, value->number, buf, size); break;
    case TDM_CONFIG_STRING: snprintf(buf, size, "%s", value->text ? value->text : ""); break;
    }
}

/* Parse one text for one spec. Returns 0 and fills 'out' when it is valid. */
static int parse_value(const tdm_config_spec *spec, const char *text, tdm_config_value *out)
{
    long long v;
    switch (spec->type) {
    case TDM_CONFIG_BOOL:
        if (word_in(text, true_words))
            out->number = 1;
        else if (word_in(text, false_words))
            out->number = 0;
        else
            return -1;
        return 0;
    case TDM_CONFIG_INT:
    case TDM_CONFIG_SIZE:
        if (spec->type == TDM_CONFIG_SIZE && spec->choices &&
            strcasecmp(text, spec->choices) == 0) {
            out->number = TDM_CONFIG_AUTO;
            return 0;
        }
        if (parse_number(text, spec->type == TDM_CONFIG_SIZE, &v) != 0 || v < spec->min ||
            v > spec->max)
            return -1;
        out->number = v;
        return 0;
    case TDM_CONFIG_ENUM:
        v = choice_index(spec->choices, text);
        if (v < 0)
            return -1;
        out->number = v;
        return 0;
    case TDM_CONFIG_STRING: out->text = text; return 0;
    }
    return -1;
}

/* Edit distance between two short names (case-insensitive): insertions,
   deletions, substitutions and swaps of two neighbours each count 1 (the
   typing slips: TANDEM_LEVLE for TANDEM_LEVEL is one). */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return (size_t)-1;
    size_t d[64][64];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int x = tolower((unsigned char)a[i - 1]), y = tolower((unsigned char)b[j - 1]);
            size_t best = d[i - 1][j - 1] + (x != y);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && x == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == y && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

/* The known name an unknown one was likely meant to be, or -1: the closest
   one, if a third of the part after TANDEM_ (at least one letter) would
   turn one into the other. Further apart, a suggestion names an unrelated
   variable (TANDEM_FOO is three letters from TANDEM_POLL). */
static long closest_name(const tdm_config_spec *table, size_t count, const char *name)
{
    size_t best = 0, best_distance = (size_t)-1;
    for (size_t j = 0; j < count; j++) {
        size_t d = edit_distance(name, table[j].name);
        if (d < best_distance) {
            best_distance = d;
            best = j;
        }
    }
    size_t letters = strlen(name) > strlen(PREFIX) ? strlen(name) - strlen(PREFIX) : 0;
    size_t allowed = letters / 3 > 1 ? letters / 3 : 1;
    return count > 0 && best_distance <= allowed ? (long)best : -1;
}

static void warnf(tdm_config_warn_fn warn, void *context, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void warnf(tdm_config_warn_fn warn, void *context, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (warn)
        warn(context, line);
}

int tdm_config_parse(const tdm_config_spec *table, size_t count, char *const *env,
                     tdm_config_value *values, tdm_config_warn_fn warn, void *context)
{
    int warnings = 0;
    for (size_t i = 0; i < count; i++) {
        values[i] = (tdm_config_value){0, NULL, 0};
        if (parse_value(&table[i], table[i].default_text, &values[i]) != 0) {
            warnf(warn, context, "internal: the default of %s is invalid", table[i].name);
            warnings++;
        }
    }
    for (char *const *e = env; e && *e; e++) {
        const char *entry = *e;
        if (strncmp(entry, PREFIX, strlen(PREFIX)) != 0)
            continue;
        const char *eq = strchr(entry, '=');
        if (!eq)
            continue;
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(eq - entry), entry);
        const char *text = eq + 1;

        size_t i = 0;
        while (i < count && strcmp(table[i].name, name) != 0)
            i++;
        if (i == count) {
            long best = closest_name(table, count, name);
            if (best >= 0)
                warnf(warn, context, "unknown variable %s; did you mean %s?", name,
                      table[best].name);
            else
                warnf(warn, context,
                      "unknown variable %s; the TANDEM_* variables are listed in "
                      "docs/ENVIRONMENT.md",
                      name);
            warnings++;
            continue;
        }

        tdm_config_value parsed = values[i];
        if (parse_value(&table[i], text, &parsed) == 0) {
            parsed.from_env = 1;
            values[i] = parsed;
        } else {
            char accepted[256];
            tdm_config_accepted(&table[i], accepted, sizeof accepted);
            warnf(warn, context, "%s=%s is not valid: expected %s; using the default %s", name,
                  text, accepted, table[i].default_text);
            warnings++;
        }
    }
    return warnings;
}

extern char **environ;

int tdm_config_load(tdm_config_warn_fn warn, void *context)
{
    return tdm_config_parse(tdm_config_table, TDM_CFG_COUNT, environ, tdm_config, warn, context);
}
