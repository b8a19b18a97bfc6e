/*  ufo_mcp_spec.c - MCP server definitions in the configuration (see ufo_mcp_spec.h). */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_value.h"
#include "ufo_mcp_spec.h"

//  --- server definitions -----------------------------------------------------------------

static int
s_str_field (const ufo_value_t *spec, const char *key, bool required, const char *where,
             ufo_error_t *err)
{
    const ufo_value_t *v = ufo_value_map_get (spec, key);
    if (!v)
        return required ? ufo_error_set (err, UFO_E_MISSING, "%s: \"%s\" is required", where, key) : 0;
    if (ufo_value_type (v) != UFO_TSTRING || (required && !*ufo_value_str (v)))
        return ufo_error_set (err, UFO_E_TYPE, "%s: \"%s\" must be a%s string", where, key,
                              required ? " non-empty" : "");
    return 0;
}

static int
s_str_map (const ufo_value_t *spec, const char *key, const char *where, ufo_error_t *err)
{
    const ufo_value_t *v = ufo_value_map_get (spec, key);
    if (!v)
        return 0;
    if (ufo_value_type (v) != UFO_TMAP)
        return ufo_error_set (err, UFO_E_TYPE, "%s: \"%s\" must be an object of strings", where, key);
    for (size_t i = 0; i < ufo_value_size (v); i++)
        if (ufo_value_type (ufo_value_map_value_at (v, i)) != UFO_TSTRING)
            return ufo_error_set (err, UFO_E_TYPE, "%s: \"%s\".\"%.40s\" must be a string", where, key,
                                  ufo_value_map_key_at (v, i));
    return 0;
}

int
ufo_mcp_spec_check (const ufo_value_t *spec, const char *where, ufo_error_t *err)
{
    if (ufo_value_type (spec) != UFO_TMAP)
        return ufo_error_set (err, UFO_E_TYPE, "%s: a server must be an object", where);
    if (s_str_field (spec, "name", true, where, err))
        return -1;
    const char *name = ufo_value_map_str (spec, "name", "");
    if (strlen (name) > 48 || strspn (name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                            "0123456789_-") != strlen (name))
        return ufo_error_set (err, UFO_E_INVALID, "%s: \"name\" \"%.60s\" must be 1-48 of A-Z a-z 0-9 _ -",
                              where, name);
    const char *type = ufo_value_map_str (spec, "type", "stdio");
    static const char *const known [] = { "name", "type", "command", "args", "env", "cwd", "url",
                                          "headers", NULL };
    for (size_t i = 0; i < ufo_value_size (spec); i++) {
        const char *k = ufo_value_map_key_at (spec, i);
        size_t j = 0;
        while (known [j] && strcmp (known [j], k))
            j++;
        if (!known [j])
            return ufo_error_set (err, UFO_E_INVALID, "%s: unknown key \"%.40s\" in server %s", where, k, name);
    }
    if (s_str_field (spec, "type", false, where, err))
        return -1;
    if (!strcmp (type, "stdio")) {
        if (s_str_field (spec, "command", true, where, err) || s_str_field (spec, "cwd", false, where, err)
        ||  s_str_map (spec, "env", where, err))
            return -1;
        const ufo_value_t *args = ufo_value_map_get (spec, "args");
        if (args && ufo_value_type (args) != UFO_TLIST)
            return ufo_error_set (err, UFO_E_TYPE, "%s: \"args\" must be a list of strings", where);
        for (size_t i = 0; i < ufo_value_size (args); i++)
            if (ufo_value_type (ufo_value_list_at (args, i)) != UFO_TSTRING)
                return ufo_error_set (err, UFO_E_TYPE, "%s: \"args\"[%zu] must be a string", where, i);
        if (ufo_value_map_has (spec, "url") || ufo_value_map_has (spec, "headers"))
            return ufo_error_set (err, UFO_E_INVALID, "%s: a stdio server has no \"url\" or \"headers\"", where);
        return 0;
    }
    if (!strcmp (type, "http")) {
        if (s_str_field (spec, "url", true, where, err) || s_str_map (spec, "headers", where, err))
            return -1;
        const char *url = ufo_value_map_str (spec, "url", "");
        if (strncmp (url, "http://", 7) && strncmp (url, "https://", 8))
            return ufo_error_set (err, UFO_E_INVALID, "%s: \"url\" must start with http:// or https://", where);
        if (ufo_value_map_has (spec, "command") || ufo_value_map_has (spec, "args"))
            return ufo_error_set (err, UFO_E_INVALID, "%s: an http server has no \"command\" or \"args\"", where);
        return 0;
    }
    return ufo_error_set (err, UFO_E_INVALID, "%s: \"type\" must be \"stdio\" or \"http\", not \"%.20s\"",
                          where, type);
}

//  --- configuration ----------------------------------------------------------------------------

int
ufo_mcp_servers_check (const ufo_value_t *value, const char *keypath, ufo_error_t *err)
{
    if (ufo_value_type (value) != UFO_TMAP)
        return ufo_error_set (err, UFO_E_TYPE, "%s must be an object: {\"APP_AGENT\": {\"*\": [servers], "
                              "\"<application>\": [servers]}, \"HOST_AGENT\": {...}}", keypath);
    for (size_t a = 0; a < ufo_value_size (value); a++) {
        const char *agent = ufo_value_map_key_at (value, a);
        const ufo_value_t *apps = ufo_value_map_value_at (value, a);
        if (strcmp (agent, "APP_AGENT") && strcmp (agent, "HOST_AGENT"))
            return ufo_error_set (err, UFO_E_INVALID, "%s: \"%.40s\" is not an agent (APP_AGENT or HOST_AGENT)",
                                  keypath, agent);
        if (ufo_value_type (apps) != UFO_TMAP)
            return ufo_error_set (err, UFO_E_TYPE, "%s.%s must be an object of application -> list of servers",
                                  keypath, agent);
        for (size_t i = 0; i < ufo_value_size (apps); i++) {
            const char *app = ufo_value_map_key_at (apps, i);
            const ufo_value_t *list = ufo_value_map_value_at (apps, i);
            if (ufo_value_type (list) != UFO_TLIST)
                return ufo_error_set (err, UFO_E_TYPE, "%s.%s.%.40s must be a list of servers", keypath, agent, app);
            if (ufo_value_size (list) > UFO_MCP_MAX_SERVERS)
                return ufo_error_set (err, UFO_E_TOO_LARGE, "%s.%s.%.40s: more than %d servers", keypath, agent,
                                      app, UFO_MCP_MAX_SERVERS);
            for (size_t k = 0; k < ufo_value_size (list); k++) {
                char where [200];
                snprintf (where, sizeof where, "%s.%s.%.40s[%zu]", keypath, agent, app, k);
                if (ufo_mcp_spec_check (ufo_value_list_at (list, k), where, err) < 0)
                    return -1;
                const char *name = ufo_value_map_str (ufo_value_list_at (list, k), "name", "");
                //  names are unique among the servers an agent of this application gets
                const ufo_value_t *any = ufo_value_map_get (apps, "*");
                for (size_t j = 0; j < k; j++)
                    if (!strcmp (ufo_value_map_str (ufo_value_list_at (list, j), "name", ""), name))
                        return ufo_error_set (err, UFO_E_INVALID, "%s: a second server named %s", where, name);
                if (strcmp (app, "*"))
                    for (size_t j = 0; j < ufo_value_size (any); j++)
                        if (!strcmp (ufo_value_map_str (ufo_value_list_at (any, j), "name", ""), name))
                            return ufo_error_set (err, UFO_E_INVALID, "%s: server %s is also in \"*\"", where, name);
            }
        }
    }
    return 0;
}
