/*  ufo_report_html.c - HTML helpers of the session report: escaping, images (embedded as
    data: URLs or linked), and the page's one style sheet and one script. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_json.h"
#include "ufo_utf8.h"
#include "ufo_value.h"
#include "ufo_report.h"
#include "ufo_report_int.h"

void
ufo_report_esc (ufo_buf_t *out, const char *text, size_t len)
{
    if (!text)
        return;
    size_t pos = 0, plain = 0;
    while (pos < len) {
        unsigned char c = (unsigned char) text [pos];
        const char *rep = NULL;
        size_t step = 1;
        switch (c) {
            case '&': rep = "&amp;"; break;
            case '<': rep = "&lt;"; break;
            case '>': rep = "&gt;"; break;
            case '"': rep = "&quot;"; break;
            case '\'': rep = "&#39;"; break;
            default:
                if (c < 0x20 && c != '\n' && c != '\t' && c != '\r')
                    rep = "\xEF\xBF\xBD";
                else
                if (c == 0x7F)
                    rep = "\xEF\xBF\xBD";
                else
                if (c >= 0x80) {
                    step = ufo_utf8_seq (text + pos, len - pos, NULL);
                    if (step == 0) {
                        rep = "\xEF\xBF\xBD";
                        step = 1;
                    }
                }
        }
        if (rep) {
            ufo_buf_append (out, text + plain, pos - plain);
            ufo_buf_puts (out, rep);
            plain = pos + step;
        }
        pos += step;
    }
    ufo_buf_append (out, text + plain, len - plain);
}

void
ufo_report_escs (ufo_buf_t *out, const char *text)
{
    if (text)
        ufo_report_esc (out, text, strlen (text));
}

void
ufo_report_esc_value (ufo_buf_t *out, const ufo_value_t *value, size_t max)
{
    if (!value)
        return;
    char *owned = NULL;
    const char *text;
    size_t len;
    if (ufo_value_type (value) == UFO_TSTRING) {
        text = ufo_value_str (value);
        len = ufo_value_strlen (value);
    }
    else
        text = owned = ufo_json_dump (value, UFO_JSON_COMPACT, &len);
    if (max && len > max) {
        ufo_report_esc (out, text, ufo_utf8_prefix (text, len, max));
        ufo_buf_puts (out, "\xE2\x80\xA6");
    }
    else
        ufo_report_esc (out, text, len);
    free (owned);
}

char *
ufo_report_image_find (s_report_t *self, const char *name)
{
    if (!name || !*name)
        return NULL;
    const char *base = strrchr (name, '/');
    base = base ? base + 1 : name;
    const char *back = strrchr (base, '\\');       //  a path logged on another system
    base = back ? back + 1 : base;
    //  Only plain file names inside the log directory: no hidden files, no "..".
    if (!*base || *base == '.' || strlen (base) > 255)
        return NULL;
    char path [PATH_MAX];
    if (snprintf (path, sizeof path, "%s/%s", self->logdir, base) >= (int) sizeof path)
        return NULL;
    struct stat st;
    if (stat (path, &st) != 0 || !S_ISREG (st.st_mode))
        return NULL;
    return ufo_strdup (base);
}

//  Image type from the first bytes; width and height from a PNG header.
static const char *
s_image_mime (const unsigned char *head, size_t len, int *width, int *height)
{
    *width = *height = 0;
    if (len >= 24 && memcmp (head, "\x89PNG\r\n\x1a\n", 8) == 0
    &&  memcmp (head + 12, "IHDR", 4) == 0) {
        uint32_t w = (uint32_t) head [16] << 24 | (uint32_t) head [17] << 16
                   | (uint32_t) head [18] << 8 | head [19];
        uint32_t h = (uint32_t) head [20] << 24 | (uint32_t) head [21] << 16
                   | (uint32_t) head [22] << 8 | head [23];
        if (w > 0 && h > 0 && w <= 100000 && h <= 100000) {
            *width = (int) w;
            *height = (int) h;
        }
        return "image/png";
    }
    if (len >= 3 && head [0] == 0xFF && head [1] == 0xD8 && head [2] == 0xFF)
        return "image/jpeg";
    return NULL;
}

static void
s_link (s_report_t *self, const char *name)
{
    ufo_buf_t *out = self->out;
    ufo_report_escs (out, self->image_prefix);
    for (const unsigned char *p = (const unsigned char *) name; *p; p++) {
        if (isalnum (*p) || strchr ("-._~", *p))
            ufo_buf_putc (out, (char) *p);
        else
            ufo_buf_printf (out, "%%%02X", *p);
    }
}

int
ufo_report_image (s_report_t *self, const char *name, const char *caption)
{
    ufo_buf_t *out = self->out;
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/%s", self->logdir, name);
    FILE *file = fopen (path, "rb");
    struct stat st;
    if (!file || fstat (fileno (file), &st) != 0) {
        if (file)
            fclose (file);
        self->stats.images_missing++;
        ufo_buf_puts (out, "<p class=\"missing\">Screenshot <code>");
        ufo_report_escs (out, name);
        ufo_buf_puts (out, "</code> cannot be read.</p>");
        return -1;
    }
    unsigned char head [24];
    size_t got = fread (head, 1, sizeof head, file);
    int width, height;
    const char *mime = s_image_mime (head, got, &width, &height);
    if (!mime) {
        fclose (file);
        ufo_report_note (self, "%s is not a PNG or JPEG image; not shown", name);
        ufo_buf_puts (out, "<p class=\"missing\">");
        ufo_report_escs (out, name);
        ufo_buf_puts (out, " is not an image.</p>");
        return -1;
    }
    bool embed = !self->opts.link_images && (size_t) st.st_size <= self->opts.max_image_bytes;
    ufo_buf_puts (out, "<figure class=\"shot\"><img alt=\"");
    ufo_report_escs (out, caption);
    ufo_buf_puts (out, "\"");
    if (width > 0)
        ufo_buf_printf (out, " width=\"%d\" height=\"%d\"", width, height);
    if (embed) {
        size_t size = (size_t) st.st_size;
        unsigned char *data = ufo_malloc (size ? size : 1);
        memcpy (data, head, got < size ? got : size);
        size_t total = got < size ? got : size;
        while (total < size) {
            size_t n = fread (data + total, 1, size - total, file);
            if (n == 0)
                break;
            total += n;
        }
        ufo_buf_printf (out, " src=\"data:%s;base64,", mime);
        ufo_buf_base64 (out, data, total);
        ufo_buf_puts (out, "\">");
        free (data);
        self->stats.images_embedded++;
    }
    else {
        ufo_buf_puts (out, " loading=\"lazy\" src=\"");
        s_link (self, name);
        ufo_buf_puts (out, "\">");
        self->stats.images_linked++;
    }
    fclose (file);
    ufo_buf_puts (out, "<figcaption>");
    ufo_report_escs (out, caption);
    ufo_buf_puts (out, " <code>");
    ufo_report_escs (out, name);
    ufo_buf_puts (out, "</code></figcaption></figure>");
    return 0;
}

int
ufo_report_image_data_url (s_report_t *self, const char *url, const char *caption)
{
    static const char *prefixes [] = {
        "data:image/png;base64,", "data:image/jpeg;base64,", "data:image/jpg;base64,"
    };
    if (!url)
        return -1;
    size_t skip = 0;
    for (size_t i = 0; i < UFO_ARRAY_SIZE (prefixes) && !skip; i++)
        if (strncmp (url, prefixes [i], strlen (prefixes [i])) == 0)
            skip = strlen (prefixes [i]);
    if (!skip)
        return -1;
    const char *p = url + skip;
    size_t n = strspn (p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=");
    if (n == 0 || p [n] != '\0')
        return -1;
    ufo_buf_puts (self->out, "<figure class=\"shot\"><img alt=\"");
    ufo_report_escs (self->out, caption);
    ufo_buf_puts (self->out, "\" src=\"");
    ufo_buf_append (self->out, url, skip + n);
    ufo_buf_puts (self->out, "\"><figcaption>");
    ufo_report_escs (self->out, caption);
    ufo_buf_puts (self->out, "</figcaption></figure>");
    self->stats.images_embedded++;
    return 0;
}

//  One style sheet for the whole page; system fonts only (no network at view time).
const char *ufo_report_css =
":root{color-scheme:light dark;--bg:#f6f7f9;--fg:#1d2430;--muted:#6a7380;--card:#fff;--line:#dde1e7;--accent:#2f6fdb;"
"--ok:#1f8a4c;--bad:#c93434;--warn:#b7791f;--info:#2f6fdb;--code:#f0f2f5}"
"@media (prefers-color-scheme:dark){:root{--bg:#15181d;--fg:#e4e7ec;--muted:#98a1ad;"
"--card:#1e2228;--line:#313741;--accent:#6ea2ff;--code:#262b33}}"
"*{box-sizing:border-box}"
"body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.5 system-ui,-apple-system,"
"'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif}"
".icon{font-family:'Noto Color Emoji','Apple Color Emoji','Segoe UI Emoji',sans-serif}"
"code,pre{font:12.5px/1.45 ui-monospace,'DejaVu Sans Mono',Menlo,Consolas,monospace}"
"code{background:var(--code);padding:0 .3em;border-radius:3px}"
"pre{background:var(--code);padding:.6em .8em;border-radius:6px;overflow:auto;max-height:28em;"
"white-space:pre-wrap;word-break:break-word;margin:.3em 0}"
"a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}"
"h1{font-size:1.45em;margin:0}h2{font-size:1.2em;margin:0 0 .6em}h3{font-size:1.05em;margin:.8em 0 .4em}"
".muted{color:var(--muted)}"
"header.top{padding:1em 1.5em;background:var(--card);border-bottom:1px solid var(--line)}"
"header.top p{margin:.3em 0 0}"
".tools{position:sticky;top:0;z-index:5;display:flex;flex-wrap:wrap;gap:.4em 1em;align-items:center;"
"padding:.5em 1.5em;background:var(--card);border-bottom:1px solid var(--line)}"
".tools[hidden]{display:none}"
".tools input,.tools select,.tools button{font:inherit;padding:.15em .4em;border:1px solid var(--line);"
"border-radius:4px;background:var(--bg);color:var(--fg)}.tools input[type=number]{width:5em}"
".tools .keys{margin-left:auto;font-size:.85em}"
".layout{display:flex;gap:1.5em;padding:1em 1.5em;align-items:flex-start}"
"nav.toc{position:sticky;top:3.5em;flex:0 0 11em;font-size:.93em}"
"nav.toc ul{list-style:none;margin:0;padding:0}nav.toc li{margin:.15em 0}nav.toc li.sub{padding-left:1em}"
"main{flex:1;min-width:0}"
"@media (max-width:900px){.layout{display:block}nav.toc{position:static}}"
"section{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:1em 1.2em;"
"margin:0 0 1em}"
"section.notes{border-color:var(--warn);border-left:5px solid var(--warn)}"
"ul.requests{margin:0;padding:0;list-style:none}ul.requests li{margin:.2em 0;font-size:1.05em}"
"dl.totals{display:flex;flex-wrap:wrap;gap:.8em 2.5em;margin:0}dl.totals dt{color:var(--muted);"
"font-size:.85em}dl.totals dd{margin:0;font-size:1.35em;font-weight:600}"
"table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.25em .5em;"
"border-bottom:1px solid var(--line);vertical-align:top}th{font-size:.85em;color:var(--muted);"
"font-weight:600;position:sticky;top:0;background:var(--card)}td.num{text-align:right;white-space:nowrap}"
".timeline{table-layout:fixed}.timeline td{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}"
".timeline th:nth-child(1){width:3.4em}.timeline th:nth-child(2){width:4.4em}"
".timeline th:nth-child(3){width:14.5em}.timeline th:nth-child(4){width:14%}.timeline th:nth-child(6){width:13%}"
".timeline th:nth-child(7){width:7.6em}.timeline th:nth-child(8){width:5em}.timeline th:nth-child(9){width:6.6em}"
".timeline td.act code{background:none;padding:0}.timeline tr.host td{background:"
"color-mix(in srgb,var(--accent) 5%,transparent)}.timeline-wrap{max-height:32em;overflow:auto}"
".status{display:inline-block;padding:0 .5em;border-radius:999px;font-size:.8em;font-weight:600;"
"color:#fff;background:var(--muted);white-space:nowrap}"
".st-FINISH,.st-yes{background:var(--ok)}.st-FAIL,.st-ERROR,.st-no{background:var(--bad)}"
".st-PENDING,.st-CONFIRM,.st-unsure{background:var(--warn)}.st-CONTINUE,.st-ASSIGN{background:var(--info)}"
".agent{font-weight:600}.agent.app{color:#7a4fc4}"
"details{margin:.4em 0}summary{cursor:pointer}"
"details.round{border:1px solid var(--line);border-radius:8px;padding:.3em .8em;margin:0 0 1em;"
"background:var(--card)}"
"details.round>summary{font-size:1.1em;font-weight:600;padding:.4em 0}"
"details.step{border-left:3px solid var(--line);padding:.1em 0 .1em .7em;margin:.5em 0}"
"details.step.app{border-left-color:#7a4fc4}details.step.host{border-left-color:var(--accent)}"
"details.step>summary{display:flex;flex-wrap:wrap;gap:.2em .7em;align-items:baseline}"
"details.step>summary::before{content:'\\25B8';color:var(--muted)}"
"details.step[open]>summary::before{content:'\\25BE'}details.step>summary{list-style:none}"
"details.step>summary::-webkit-details-marker{display:none}"
".stepno{font-weight:700;min-width:3em}.flash{animation:flash 1.2s}"
"@keyframes flash{from{background:color-mix(in srgb,var(--accent) 25%,transparent)}to{background:none}}"
".subtask{margin:1em 0 .3em;padding:.3em .6em;border-radius:4px;background:var(--code);font-weight:600}"
".kv{display:grid;grid-template-columns:9em 1fr;gap:.2em .8em;margin:.4em 0}.kv>dt{color:var(--muted)}"
".kv>dd{margin:0;min-width:0;white-space:pre-wrap;word-break:break-word}"
".qa{border-left:4px solid var(--warn);background:color-mix(in srgb,var(--warn) 8%,transparent);"
"padding:.4em .8em;margin:.5em 0;border-radius:0 6px 6px 0}.qa.refused{border-left-color:var(--bad)}"
".err{color:var(--bad);font-weight:600}"
".shots{display:grid;grid-template-columns:repeat(auto-fill,minmax(30em,1fr));gap:.8em;margin:.5em 0;"
"max-width:80em}"
"figure.shot{margin:0}figure.shot img{max-width:100%;max-height:34em;width:auto;height:auto;"
"border:1px solid var(--line);"
"border-radius:4px;cursor:zoom-in;background:#fff}figure.shot img.zoom{position:fixed;inset:2%;"
"width:96%;height:96%;object-fit:contain;z-index:9;cursor:zoom-out;background:rgba(0,0,0,.85)}"
"figcaption{font-size:.85em;color:var(--muted)}.missing{color:var(--warn)}"
".verdict{font-size:1.1em;font-weight:600}.eval{margin:.6em 0 1em}"
".scores{width:auto;min-width:28em}.scores td{padding-right:2em}.scores td:first-child{width:2em;padding-right:.5em}"
"footer{padding:0 1.5em 2em;font-size:.85em}"
"@media print{.tools,nav.toc{display:none}details{display:block}}";

//  The page's script: marks loaded images, filters (also from the query string:
//  report.html?agent=HostAgent&status=PENDING&q=text), jump to a step (also report.html#step-N),
//  keyboard navigation. Everything it adds is optional; the page reads the same without it.
const char *ufo_report_js =
"(function(){'use strict';var d=document,b=d.body;b.setAttribute('data-js','1');"
"var imgs=[].slice.call(d.querySelectorAll('img')),loaded=0;"
"function upd(){b.setAttribute('data-images-total',imgs.length);"
"b.setAttribute('data-images-loaded',loaded);}"
"function mark(i){if(i.getAttribute('data-loaded')==='1')return;if(i.naturalWidth>0){"
"i.setAttribute('data-loaded','1');loaded++;upd();}}"
"imgs.forEach(function(i){if(i.complete)mark(i);else i.addEventListener('load',function(){mark(i);});"
"i.addEventListener('error',function(){i.setAttribute('data-loaded','0');});"
"i.addEventListener('click',function(){i.classList.toggle('zoom');});});upd();"
"var steps=[].slice.call(d.querySelectorAll('details.step')),"
"rows=[].slice.call(d.querySelectorAll('tr.row')),tools=d.getElementById('tools');"
"if(!tools)return;tools.hidden=false;"
"var fa=d.getElementById('f-agent'),fs=d.getElementById('f-status'),ft=d.getElementById('f-text'),"
"fn=d.getElementById('f-step'),fc=d.getElementById('f-count');"
"function fill(sel,attr){var seen={};steps.forEach(function(s){var v=s.getAttribute(attr);"
"if(v&&!seen[v]){seen[v]=1;var o=d.createElement('option');o.value=v;o.textContent=v;sel.appendChild(o);}});}"
"fill(fa,'data-agent');fill(fs,'data-status');"
"try{var q=new URLSearchParams(location.search);fa.value=q.get('agent')||'';"
"fs.value=q.get('status')||'';ft.value=q.get('q')||'';}catch(e){}"
"function filter(){var a=fa.value,s=fs.value,t=ft.value.toLowerCase(),n=0,show={};"
"steps.forEach(function(e){var ok=(!a||e.getAttribute('data-agent')===a)&&"
"(!s||e.getAttribute('data-status')===s)&&"
"(!t||(e._t||(e._t=e.textContent.toLowerCase())).indexOf(t)>=0);"
"e.hidden=!ok;if(ok){n++;show[e.id]=1;}});"
"rows.forEach(function(r){r.hidden=!show['step-'+r.getAttribute('data-step')];});"
"fc.textContent=n+' of '+steps.length+' steps';}"
"[fa,fs].forEach(function(e){e.addEventListener('change',filter);});"
"ft.addEventListener('input',filter);"
"function openUp(e){for(var p=e;p;p=p.parentElement)if(p.tagName==='DETAILS')p.open=true;}"
"var cur=-1;function jump(id,push){var e=d.getElementById(id);if(!e)return false;"
"openUp(e);e.hidden=false;cur=steps.indexOf(e);e.scrollIntoView({block:'start'});"
"e.classList.remove('flash');void e.offsetWidth;e.classList.add('flash');"
"if(push&&history.replaceState)history.replaceState(null,'','#'+id);return true;}"
"fn.addEventListener('change',function(){if(!jump('step-'+fn.value,true))fn.setCustomValidity('no such step');"
"else fn.setCustomValidity('');});"
"function hash(){var h=decodeURIComponent(location.hash.slice(1));if(h)jump(h,false);}"
"filter();window.addEventListener('hashchange',hash);hash();"
"function all(open){d.querySelectorAll('details').forEach(function(e){e.open=open;});}"
"d.getElementById('b-expand').addEventListener('click',function(){all(true);});"
"d.getElementById('b-collapse').addEventListener('click',function(){all(false);"
"d.querySelectorAll('details.round').forEach(function(e){e.open=true;});});"
"function move(k){var v=steps.filter(function(e){return !e.hidden;});if(!v.length)return;"
"var i=v.indexOf(steps[cur]);i=i<0?(k>0?0:v.length-1):Math.max(0,Math.min(v.length-1,i+k));"
"v[i].open=true;jump(v[i].id,true);}"
"d.addEventListener('keydown',function(ev){var t=ev.target.tagName;"
"if(t==='INPUT'||t==='SELECT'||t==='TEXTAREA'||ev.ctrlKey||ev.metaKey||ev.altKey)return;"
"var k=ev.key;if(k==='j')move(1);else if(k==='k')move(-1);else if(k==='e')all(true);"
"else if(k==='c')d.getElementById('b-collapse').click();"
"else if(k==='/'){ft.focus();ev.preventDefault();}else if(k==='g'){fn.focus();ev.preventDefault();}"
"else if(k==='Escape'){imgs.forEach(function(i){i.classList.remove('zoom');});}});"
"})();";
