/*  ufo_desktop_profile.c - per-application profiles: the quirks of the applications people
    automate, in one place and as data (the JSON below; docs/DESKTOP.md "Application
    profiles"). A profile is found by any name the application goes by: launcher, process,
    X WM_CLASS (instance or class) or accessibility name. It gives the name a user knows,
    extra environment, files to put into a private profile before the first start (start-up
    dialogs switched off), and the default launchers. No GLib, no X: plain values. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_desktop.h"
#include <sys/stat.h>

//  $PROFILE in an argument or file path is the application's private profile directory:
//  $XDG_CONFIG_HOME/ufobus-profiles/<app> (the session gives each desktop its own).
static const char *s_profiles_json =
"{"
" \"libreoffice\": {"
"  \"names\": [\"libreoffice\", \"soffice\", \"soffice.bin\", \"LibreOffice\","
"              \"libreoffice-writer\", \"libreoffice-calc\", \"libreoffice-startcenter\"],"
"  \"env\": {\"SAL_USE_VCLPLUGIN\": \"gtk3\"},"
"  \"launchers\": {"
"   \"libreoffice-writer\": [\"libreoffice\", \"--writer\", \"--norestore\", \"--nologo\","
"                            \"-env:UserInstallation=file://$PROFILE\"],"
"   \"libreoffice-calc\": [\"libreoffice\", \"--calc\", \"--norestore\", \"--nologo\","
"                          \"-env:UserInstallation=file://$PROFILE\"]},"
"  \"files\": {\"$PROFILE/user/registrymodifications.xcu\":"
"   \"<?xml version=\\\"1.0\\\" encoding=\\\"UTF-8\\\"?>\\n<oor:items"
" xmlns:oor=\\\"http://openoffice.org/2001/registry\\\""
" xmlns:xs=\\\"http://www.w3.org/2001/XMLSchema\\\""
" xmlns:xsi=\\\"http://www.w3.org/2001/XMLSchema-instance\\\">\\n"
"<item oor:path=\\\"/org.openoffice.Office.Common/Misc\\\"><prop oor:name=\\\"ShowTipOfTheDay\\\""
" oor:op=\\\"fuse\\\"><value>false</value></prop></item>\\n"
"<item oor:path=\\\"/org.openoffice.Office.Common/Misc\\\"><prop oor:name=\\\"FirstRun\\\""
" oor:op=\\\"fuse\\\"><value>false</value></prop></item>\\n"
"<item oor:path=\\\"/org.openoffice.Setup/Product\\\"><prop oor:name=\\\"ooSetupLastVersion\\\""
" oor:op=\\\"fuse\\\"><value>99.0</value></prop></item>\\n"
"</oor:items>\\n\"},"
"  \"pointer_enter\": true,"
"  \"revalidate\": true,"
"  \"controls\": ["
"   {\"type\": \"Edit\", \"in\": \"Formula Tool Bar\", \"name\": \"Name Box\"}]"
" },"
" \"firefox-esr\": {"
"  \"names\": [\"firefox-esr\", \"firefox\", \"Firefox\", \"Firefox-esr\", \"Navigator\"],"
"  \"env\": {\"GNOME_ACCESSIBILITY\": \"1\", \"MOZ_CRASHREPORTER_DISABLE\": \"1\"},"
"  \"launchers\": {"
"   \"firefox-esr\": [\"firefox-esr\", \"--no-remote\", \"--profile\", \"$PROFILE\"]},"
"  \"files\": {\"$PROFILE/user.js\":"
"   \"user_pref(\\\"browser.aboutwelcome.enabled\\\", false);\\n"
"user_pref(\\\"browser.shell.checkDefaultBrowser\\\", false);\\n"
"user_pref(\\\"browser.startup.homepage_override.mstone\\\", \\\"ignore\\\");\\n"
"user_pref(\\\"browser.startup.page\\\", 0);\\n"
"user_pref(\\\"datareporting.policy.dataSubmissionEnabled\\\", false);\\n"
"user_pref(\\\"toolkit.telemetry.reportingpolicy.firstRun\\\", false);\\n"
"user_pref(\\\"browser.tabs.warnOnClose\\\", false);\\n"
"user_pref(\\\"accessibility.force_disabled\\\", 0);\\n\"}"
" }"
"}";

static ufo_value_t *s_profiles;     //  parsed once (read-only afterwards)

const ufo_value_t *
ufo_desktop_profiles (void)
{
    if (!s_profiles)
        s_profiles = ufo_json_parse_str (s_profiles_json, NULL);
    assert (s_profiles);            //  the table above is valid JSON
    return s_profiles;
}

//  The base name of a path ("/usr/bin/firefox-esr" -> "firefox-esr").
static const char *
s_base (const char *name)
{
    const char *slash = strrchr (name, '/');
    return slash ? slash + 1 : name;
}

const char *
ufo_desktop_profile_of (const char *name)
{
    if (!name || !*name)
        return NULL;
    const ufo_value_t *all = ufo_desktop_profiles ();
    const char *base = s_base (name);
    for (size_t i = 0; i < ufo_value_size (all); i++) {
        const char *app = ufo_value_map_key_at (all, i);
        const ufo_value_t *prof = ufo_value_map_value_at (all, i);
        if (strcasecmp (app, base) == 0)
            return app;
        const ufo_value_t *names = ufo_value_map_get (prof, "names");
        for (size_t k = 0; k < ufo_value_size (names); k++) {
            const char *n = ufo_value_str (ufo_value_list_at (names, k));
            if (n && strcasecmp (n, base) == 0)
                return app;
        }
        //  a launcher of the profile
        if (ufo_value_map_get (ufo_value_map_get (prof, "launchers"), base))
            return app;
    }
    return NULL;
}

const char *
ufo_desktop_app_name (const char *name)
{
    const char *app = ufo_desktop_profile_of (name);
    return app ? app : (name ? name : "");
}

bool
ufo_desktop_same_app (const char *a, const char *b)
{
    if (!a || !b || !*a || !*b)
        return false;
    return strcasecmp (ufo_desktop_app_name (a), ufo_desktop_app_name (b)) == 0;
}

char *
ufo_desktop_profile_expand (const char *app, const char *text)
{
    if (!text)
        return NULL;
    const char *base = getenv ("XDG_CONFIG_HOME");
    char dir [1024];
    if (base && *base)
        snprintf (dir, sizeof dir, "%s/ufobus-profiles/%s", base, app ? app : "app");
    else
        snprintf (dir, sizeof dir, "%s/.config/ufobus-profiles/%s",
                  getenv ("HOME") ? getenv ("HOME") : "/tmp", app ? app : "app");
    ufo_buf_t buf;
    ufo_buf_init (&buf);
    for (const char *p = text; *p; ) {
        if (strncmp (p, "$PROFILE", 8) == 0) {
            ufo_buf_puts (&buf, dir);
            p += 8;
        }
        else
            ufo_buf_putc (&buf, *p++);
    }
    return ufo_buf_detach (&buf, NULL);
}

//  mkdir -p of the directory part of path.
static void
s_mkdirs (const char *path)
{
    char tmp [1024];
    snprintf (tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir (tmp, 0700);
            *p = '/';
        }
}

int
ufo_desktop_profile_prepare (const char *app, ufo_error_t *err)
{
    const ufo_value_t *prof = app ? ufo_value_map_get (ufo_desktop_profiles (), app) : NULL;
    if (!prof)
        return 0;
    char *dir = ufo_desktop_profile_expand (app, "$PROFILE/");
    s_mkdirs (dir);
    free (dir);
    const ufo_value_t *files = ufo_value_map_get (prof, "files");
    for (size_t i = 0; i < ufo_value_size (files); i++) {
        char *path = ufo_desktop_profile_expand (app, ufo_value_map_key_at (files, i));
        const char *content = ufo_value_str (ufo_value_map_value_at (files, i));
        if (access (path, F_OK) != 0 && content) {     //  what the application saved stays
            s_mkdirs (path);
            FILE *f = fopen (path, "w");
            bool ok = f && fputs (content, f) >= 0;
            if (f && fclose (f) != 0)
                ok = false;
            if (!ok) {
                ufo_error_set (err, UFO_E_IO, "profile of %s: cannot write %s", app, path);
                free (path);
                return -1;
            }
        }
        free (path);
    }
    return 0;
}

void
ufo_desktop_profile_name_controls (const char *app, ufo_value_t *controls)
{
    const ufo_value_t *prof = app ? ufo_value_map_get (ufo_desktop_profiles (), app) : NULL;
    const ufo_value_t *rules = ufo_value_map_get (prof, "controls");
    for (size_t k = 0; k < ufo_value_size (rules); k++) {
        const ufo_value_t *rule = ufo_value_list_at (rules, k);
        const char *type = ufo_value_map_str (rule, "type", "");
        const char *in = ufo_value_map_str (rule, "in", "");
        const char *name = ufo_value_map_str (rule, "name", "");
        for (size_t i = 0; *name && i < ufo_value_size (controls); i++) {
            ufo_value_t *c = ufo_value_list_at (controls, i);
            if (!strcmp (ufo_value_map_str (c, "control_type", ""), type)
            &&  !strcmp (ufo_value_map_str (c, "container", ""), in)
            &&  !*ufo_value_map_str (c, "control_text", "")
            &&  !*ufo_value_map_str (c, "labelled_by", "")) {
                ufo_value_map_set_str (c, "labelled_by", name);
                break;          //  a rule names one control: the first unnamed one
            }
        }
    }
}

bool
ufo_desktop_profile_flag (const char *app, const char *key)
{
    if (!app || !key)
        return false;
    const ufo_value_t *prof = ufo_value_map_get (ufo_desktop_profiles (), app);
    return ufo_value_map_bool (prof, key, false);
}
