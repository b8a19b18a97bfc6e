/*  ufo_config_schema.c - the table of every known configuration key.

    Each row: dotted path, type, default (JSON text; NULL = optional, absent unless set),
    range for numbers ("min..max"), allowed values for enumerations ("a|b|c"), one line of
    help. The upper-case keys are the original UFO's, with its defaults; the lower-case
    sections are ufobus's own. To add a key, add a row in the right section and describe it
    in docs/CONFIG.md (test_config checks both config/ufo.json and the docs against this table;
    `test_config --defaults-json` prints the new config/ufo.json). */
#include "ufo_prelude.h"
#include "ufo_config.h"

#define AGENT_LLM_KEYS(B, KIND, MODEL) \
    { B, "map", "{}", NULL, NULL, KIND }, \
    { B ".VISUAL_MODE", "bool", "true", NULL, NULL, \
      "send screenshots to the model (a vision model is required)" }, \
    { B ".API_TYPE", "string", "\"openai\"", NULL, UFO_API_TYPES, \
      "LLM provider protocol" }, \
    { B ".API_BASE", "string", "\"https://api.openai.com/v1/chat/completions\"", NULL, NULL, \
      "endpoint URL (for ollama e.g. http://localhost:11434)" }, \
    { B ".API_KEY", "string", "\"\"", NULL, NULL, \
      "API key (prefer setting it through the environment)" }, \
    { B ".API_VERSION", "string", "\"2024-02-15-preview\"", NULL, NULL, \
      "API version (aoai / azure_ad only)" }, \
    { B ".API_MODEL", "string", MODEL, NULL, NULL, "model name" }, \
    { B ".API_DEPLOYMENT_ID", "string", "\"\"", NULL, NULL, \
      "deployment id (aoai / azure_ad only)" }

//  Per-block overrides of the top-level LLM call settings: optional, no default, so the
//  top-level value applies unless the block sets its own (see ufo_config_agent).
#define AGENT_CALL_KEYS(B) \
    { B ".MAX_TOKENS", "int", NULL, "1..1000000", NULL, "overrides MAX_TOKENS for this agent" }, \
    { B ".REASONING_MODEL", "bool", NULL, NULL, NULL, "overrides REASONING_MODEL for this agent" }, \
    { B ".REASONING_EFFORT", "string", NULL, NULL, UFO_REASONING_EFFORTS, \
      "overrides REASONING_EFFORT for this agent" }, \
    { B ".TEMPERATURE", "float", NULL, "0..2", NULL, "overrides TEMPERATURE for this agent" }, \
    { B ".TOP_P", "float", NULL, "0..1", NULL, "overrides TOP_P for this agent" }, \
    { B ".TIMEOUT", "int", NULL, "1..3600", NULL, "overrides TIMEOUT for this agent" }, \
    { B ".MAX_RETRY", "int", NULL, "0..100", NULL, "overrides MAX_RETRY for this agent" }

#define UFO_API_TYPES "openai|aoai|azure_ad|ollama|openai_compatible|claude|gemini"
#define UFO_REASONING_EFFORTS "|minimal|low|medium|high"

static const ufo_config_key_t s_schema [] = {
    //  ====================================================================
    //  The original UFO's top-level keys (names and defaults as the original)
    //  ====================================================================
    { "MAX_STEP", "int", "50", "1..100000", NULL,
      "most steps in a session (all agents together); the round ends when reached" },
    { "MAX_ROUND", "int", "1", "1..10000", NULL,
      "most rounds (user requests) in a session" },
    { "SLEEP_TIME", "float", "1.0", "0..3600", NULL,
      "seconds to wait after an action before the next observation" },
    { "JSON_PARSING_RETRY", "int", "3", "0..100", NULL,
      "times to re-ask the model when its answer is not valid JSON; then the step is ERROR" },
    { "SAFE_GUARD", "bool", "true", NULL, NULL,
      "with status CONFIRM, ask the user before running a sensitive action" },
    { "ASK_QUESTION", "bool", "false", NULL, NULL,
      "let agents ask the user questions (PENDING); off: a placeholder answer is recorded" },
    { "USE_CUSTOMIZATION", "bool", "false", NULL, NULL,
      "save question/answer pairs to QA_PAIR_FILE and show them to the model" },
    { "QA_PAIR_FILE", "string", "\"customization/global_memory.jsonl\"", NULL, NULL,
      "JSON-lines file of question/answer pairs" },
    { "QA_PAIR_NUM", "int", "20", "0..100000", NULL,
      "how many of the latest Q&A pairs to show the model" },
    { "HISTORY_KEYS", "list<string>", "[\"Step\", \"Subtask\", \"Action\", \"UserConfirm\"]",
      NULL, NULL, "step fields stored in the blackboard trajectories" },
    { "SCREENSHOT_TO_MEMORY", "bool", "true", NULL, NULL,
      "store screenshots the model asks to save (SaveScreenshot) in the blackboard" },
    { "EVA_SESSION", "bool", "true", NULL, NULL,
      "evaluate the session at its end (skipped when it ended in ERROR)" },
    { "EVA_ROUND", "bool", "false", NULL, NULL,
      "evaluate each round at its end" },
    { "EVA_ALL_SCREENSHOTS", "bool", "true", NULL, NULL,
      "give the evaluator every screenshot (false: only the first and the last)" },
    { "INCLUDE_LAST_SCREENSHOT", "bool", "true", NULL, NULL,
      "show the model the previous step's screenshot as well" },
    { "CONCAT_SCREENSHOT", "bool", "false", NULL, NULL,
      "send the clean and annotated screenshots concatenated into one image" },
    { "SAVE_UI_TREE", "bool", "false", NULL, NULL,
      "save the application's UI tree as JSON under logs/<task>/ui_trees/ at each step" },
    { "SAVE_FULL_SCREEN", "bool", "false", NULL, NULL,
      "also save a full-screen screenshot at each step" },
    { "LOG_TO_MARKDOWN", "bool", "true", NULL, NULL,
      "write the trajectory as logs/<task>/output.md at the end of the session" },
    { "CONTROL_LIST", "list<string>",
      "[\"Button\", \"Edit\", \"TabItem\", \"Document\", \"ListItem\", \"MenuItem\", \"ScrollBar\", "
      "\"TreeItem\", \"Hyperlink\", \"ComboBox\", \"RadioButton\", \"Spinner\", \"CheckBox\", "
      "\"Group\", \"Text\", \"List\"]", NULL, NULL,
      "control types offered to the model (UIA names; mapped to AT-SPI roles)" },
    { "MAX_TOKENS", "int", "2000", "1..1000000", NULL,
      "most tokens the model may produce per call" },
    { "TEMPERATURE", "float", "0.0", "0..2", NULL, "sampling temperature" },
    { "TOP_P", "float", "0.0", "0..1", NULL, "nucleus sampling (0: provider default)" },
    { "TIMEOUT", "int", "60", "1..3600", NULL, "seconds before an LLM call is abandoned" },
    { "MAX_RETRY", "int", "3", "0..100", NULL,
      "retries of a failed LLM call before BACKUP_AGENT is tried" },
    { "REASONING_MODEL", "bool", "false", NULL, NULL,
      "a reasoning model (o-series, GPT-5): send max_completion_tokens, no temperature/top_p" },
    { "REASONING_EFFORT", "string", "\"\"", NULL, UFO_REASONING_EFFORTS,
      "reasoning_effort sent to a reasoning model (empty: the provider's default)" },

    //  ====================================================================
    //  The original UFO's per-agent LLM blocks
    //  ====================================================================
    AGENT_LLM_KEYS ("HOST_AGENT", "LLM settings of the HostAgent", "\"gpt-4o\""),
    AGENT_CALL_KEYS ("HOST_AGENT"),
    AGENT_LLM_KEYS ("APP_AGENT", "LLM settings of the AppAgent", "\"gpt-4o\""),
    AGENT_CALL_KEYS ("APP_AGENT"),
    AGENT_LLM_KEYS ("BACKUP_AGENT", "LLM used once when a call with the agent's own LLM fails",
                    "\"gpt-4o\""),
    AGENT_CALL_KEYS ("BACKUP_AGENT"),
    //  EVALUATION_AGENT has no defaults of its own: each key it does not set comes from
    //  APP_AGENT (then the top level), as in the original.
    { "EVALUATION_AGENT", "map", "{}", NULL, NULL,
      "LLM settings of the EvaluationAgent; unset keys fall back to APP_AGENT" },
    { "EVALUATION_AGENT.VISUAL_MODE", "bool", NULL, NULL, NULL,
      "send screenshots to the evaluator" },
    { "EVALUATION_AGENT.API_TYPE", "string", NULL, NULL, UFO_API_TYPES, "LLM provider protocol" },
    { "EVALUATION_AGENT.API_BASE", "string", NULL, NULL, NULL, "endpoint URL" },
    { "EVALUATION_AGENT.API_KEY", "string", NULL, NULL, NULL, "API key" },
    { "EVALUATION_AGENT.API_VERSION", "string", NULL, NULL, NULL, "API version" },
    { "EVALUATION_AGENT.API_MODEL", "string", NULL, NULL, NULL, "model name" },
    { "EVALUATION_AGENT.API_DEPLOYMENT_ID", "string", NULL, NULL, NULL, "deployment id" },
    AGENT_CALL_KEYS ("EVALUATION_AGENT"),

    //  ====================================================================
    //  The original UFO's knowledge (RAG) keys (issue 23)
    //  ====================================================================
    { "RAG_OFFLINE_DOCS", "bool", "false", NULL, NULL,
      "AppAgent: put help passages of the application (ufo knowledge index) into the prompt" },
    { "RAG_OFFLINE_DOCS_RETRIEVED_TOPK", "int", "1", "0..100", NULL,
      "how many help passages go into the prompt" },
    { "RAG_EXPERIENCE", "bool", "false", NULL, NULL,
      "HostAgent and AppAgent: put records of similar past sessions (experience) into the prompt" },
    { "RAG_EXPERIENCE_RETRIEVED_TOPK", "int", "5", "0..100", NULL,
      "how many experience records go into the prompt" },
    { "RAG_ONLINE_SEARCH", "bool", "false", NULL, NULL,
      "HostAgent and AppAgent: put web search results for the request (and, in the AppAgent, for its subtask) into the prompt" },
    { "RAG_ONLINE_SEARCH_TOPK", "int", "5", "1..50", NULL, "results asked of the search API" },
    { "RAG_ONLINE_RETRIEVED_TOPK", "int", "1", "0..50", NULL, "results that go into the prompt" },
    { "BING_API_KEY", "string", "\"\"", NULL, NULL,
      "key of the Bing Web Search API (knowledge.search_provider bing)" },
    { "RAG_DEMONSTRATION", "bool", "false", NULL, NULL,
      "AppAgent: put recorded demonstrations (ufo record) of similar subtasks into the prompt" },
    { "RAG_DEMONSTRATION_RETRIEVED_TOPK", "int", "5", "0..100", NULL,
      "how many demonstrations go into the prompt" },
    { "SAVE_EXPERIENCE", "string", "\"always_not\"", NULL, "always|ask|auto|always_not",
      "save a finished session as experience: always, ask the user, auto (when the evaluation says complete), never" },

    //  ====================================================================
    //  knowledge: the knowledge index and offline help (issue 23)
    //  ====================================================================
    { "knowledge", "map", "{}", NULL, NULL, "the knowledge index: help documents, experience" },
    { "knowledge.index", "string", "\"run/knowledge.db\"", NULL, NULL,
      "the index file (SQLite); created when absent" },
    { "knowledge.help_dirs", "list<string>", "[\"/usr/share/help\"]", NULL, NULL,
      "roots of installed Mallard / DocBook help (ROOT/LANG/APP/)" },
    { "knowledge.help_lang", "string", "\"C\"", NULL, NULL,
      "language directory of the help to index" },
    { "knowledge.man_dirs", "list<string>", "[\"/usr/share/man\"]", NULL, NULL,
      "roots of man pages; the pages of the desktop.launchers programs are indexed" },
    { "knowledge.folders", "map<list<string>>", "{}", NULL, NULL,
      "per application, folders of .md / .txt notes to index: app -> list of directories" },
    { "knowledge.max_file_bytes", "int", "1048576", "1024..1073741824", NULL,
      "larger help files are skipped (with a log line)" },
    { "knowledge.prompt_bytes", "int", "1500", "64..1000000", NULL,
      "most bytes of each retrieved passage put into a prompt" },
    { "knowledge.embeddings_url", "string", "\"\"", NULL, NULL,
      "OpenAI-compatible /embeddings URL: ufo knowledge index stores vectors, search and the AppAgent's help passages re-rank by cosine (empty: BM25 only)" },
    { "knowledge.embeddings_model", "string", "\"text-embedding-3-small\"", NULL, NULL,
      "embedding model name" },
    { "knowledge.embeddings_api_key", "string", "\"\"", NULL, NULL,
      "key of the embeddings endpoint (Authorization: Bearer)" },
    { "knowledge.search_provider", "string", "\"bing\"", NULL, "bing|searxng",
      "web search API: Bing Web Search v7 or SearXNG's JSON API" },
    { "knowledge.search_endpoint", "string", "\"https://api.bing.microsoft.com/v7.0/search\"", NULL, NULL,
      "URL of the search API (SearXNG: https://HOST/search)" },
    { "knowledge.search_timeout_ms", "int", "3000", "100..60000", NULL,
      "a web search (or an agent's query embedding) not answered by then is given up (the step goes on without it)" },

    //  ====================================================================
    //  The original UFO's MCP keys: API tools of MCP servers beside the GUI actions
    //  ====================================================================
    { "USE_MCP", "bool", "true", NULL, NULL,
      "give the agents the tools of the MCP servers in MCP_SERVERS" },
    { "MCP_SERVERS", "mcp_servers", "{}", NULL, NULL,
      "MCP servers per agent and application: {\"APP_AGENT\": {\"*\" or app: [server, ...]}, \"HOST_AGENT\": {...}}" },
    { "MCP_PREFERRED_APPS", "list<string>", "[]", NULL, NULL,
      "applications whose API tools the AppAgent is told to prefer over the GUI" },
    { "MCP_FALLBACK_TO_UI", "bool", "true", NULL, NULL,
      "when an API tool call fails, tell the model to do it through the GUI instead" },
    { "MCP_TOOL_TIMEOUT", "float", "30.0", "0.1..3600", NULL,
      "seconds an MCP request may take before it is cancelled" },
    { "ACTION_SEQUENCE", "bool", "false", NULL, NULL,
      "let the AppAgent answer several actions at once (ActionList), each checked against the window before it runs" },

    //  ====================================================================
    //  log: ufobus logging
    //  ====================================================================
    { "log", "map", "{}", NULL, NULL, "logging of every ufobus process" },
    { "log.level", "string", "\"info\"", NULL, "trace|debug|info|warn|error|off",
      "lowest level written to stderr" },
    { "log.json", "bool", "false", NULL, NULL, "write JSON lines instead of text lines" },
    { "log.dir", "string", "\"logs\"", NULL, NULL,
      "root of the session log directories logs/<task>/ (docs/LOGS.md)" },

    //  ====================================================================
    //  broker: the blackboard broker process
    //  ====================================================================
    { "broker", "map", "{}", NULL, NULL, "the blackboard broker" },
    { "broker.data_dir", "string", "\"run/broker\"", NULL, NULL,
      "directory of the durable log, snapshots and blobs" },
    { "broker.cmd_endpoint", "string", "\"\"", NULL, NULL,
      "ZeroMQ endpoint of the request socket (ROUTER); empty: ipc://RUN_DIR/broker-cmd" },
    { "broker.bus_endpoint", "string", "\"\"", NULL, NULL,
      "ZeroMQ endpoint of the event socket (XPUB); empty: ipc://RUN_DIR/broker-bus" },
    { "broker.fsync", "string", "\"always\"", NULL, "always|everysec|no",
      "when the durable log is flushed to disk" },
    { "broker.max_message_bytes", "int", "16777216", "1024..1073741824", NULL,
      "largest request frame accepted" },
    { "broker.max_item_bytes", "int", "1048576", "64..1073741824", NULL,
      "largest blackboard item accepted (encoded)" },
    { "broker.max_items_per_board", "int", "1000000", "1..1000000000", NULL,
      "most items a board holds over its four memories" },
    { "broker.max_blob_bytes", "int", "16777216", "1024..1073741824", NULL,
      "largest blob (screenshot) accepted" },
    { "broker.max_peer_output_bytes", "int", "67108864", "65536..1099511627776", NULL,
      "bytes of replies queued for one peer that does not read them before its requests get busy" },
    { "broker.snapshot_every", "int", "10000", "1..1000000000", NULL,
      "log records between compactions into a snapshot" },
    { "broker.snapshot_growth", "int", "100", "0..100000", NULL,
      "a compaction also waits until the log grew by this % of the last snapshot, in items (0: off)" },
    { "broker.stats_interval_ms", "int", "5000", "0..86400000", NULL,
      "milliseconds between statistics log lines (0: never)" },

    //  ====================================================================
    //  dispatch: task dispatch between agents
    //  ====================================================================
    { "dispatch", "map", "{}", NULL, NULL, "task dispatch and worker liveness" },
    { "dispatch.heartbeat_ivl_ms", "int", "1000", "10..600000", NULL,
      "milliseconds between heartbeats" },
    { "dispatch.heartbeat_liveness", "int", "3", "1..1000", NULL,
      "missed heartbeats before a peer is considered dead" },
    { "dispatch.default_max_attempts", "int", "3", "1..1000", NULL,
      "deliveries of a task before it fails" },
    { "dispatch.default_deadline_ms", "int", "600000", "0..604800000", NULL,
      "milliseconds a task may run before it is re-delivered or failed (0: no deadline)" },
    { "dispatch.worker_grace_ms", "int", "3000", "0..600000", NULL,
      "how long the HostAgent waits for an AppAgent worker to register (its worker.ready) before telling the model none serves the application" },

    //  ====================================================================
    //  llm: the LLM client
    //  ====================================================================
    { "llm", "map", "{}", NULL, NULL, "the LLM client" },
    { "llm.mode", "string", "\"live\"", NULL, "live|record|replay",
      "live calls; record them into the cassette; or replay the cassette without network" },
    { "llm.cassette", "string", "\"\"", NULL, NULL,
      "cassette file for record / replay" },
    { "llm.prices_file", "string", "\"config/prices.json\"", NULL, NULL,
      "token prices per \"provider/model\" used for the cost" },
    { "llm.json_mode", "bool", "true", NULL, NULL,
      "ask for response_format json_object when a JSON reply is expected (off for servers that reject it)" },

    //  ====================================================================
    //  desktop: the AT-SPI / X11 desktop layer
    //  ====================================================================
    { "desktop", "map", "{}", NULL, NULL, "the desktop layer" },
    { "desktop.png_compression", "int", "1", "0..9", NULL,
      "zlib level of saved screenshots (0 fastest, 9 smallest)" },
    { "desktop.launchers", "map<list<string>>", "{}", NULL, NULL,
      "allow-listed launchers for the HostAgent's Bash: name -> argv list (no shell)" },
    { "desktop.confirm_policy", "string", "\"ask\"", NULL, "ask|yes|no",
      "answer to CONFIRM when SAFE_GUARD is on: ask the user, or always yes / no" },
    { "desktop.confirm_controls", "list<string>", "[\"Delete*\", \"Send*\", \"Remove*\"]", NULL, NULL,
      "AppAgent: an action on a control whose name matches one of these patterns (fnmatch, any case) always needs confirmation" },
    { "desktop.confirm_actions", "list<string>", "[]", NULL, NULL,
      "AppAgent: actions (function names, fnmatch patterns) that always need confirmation" },
    { "desktop.action_timeout_ms", "int", "3000", "100..600000", NULL,
      "how long an action waits for its effect (events going quiet, expected text)" },
    { "desktop.settle_ms", "int", "60", "0..5000", NULL,
      "quiet time after the last AT-SPI event that ends an action's wait" },
    { "desktop.text_excerpt", "int", "120", "0..100000", NULL,
      "characters of a control's text shown in its description" },

    //  ====================================================================
    //  eval: the EvaluationAgent
    //  ====================================================================
    { "eval", "map", "{}", NULL, NULL, "the EvaluationAgent" },
    { "eval.max_image_bytes", "int", "8388608", "0..1073741824", NULL,
      "screenshot bytes (before base64) one evaluation may send; above it only the first and the last are sent (0: no limit)" },

    //  ====================================================================
    //  security: transport security
    //  ====================================================================
    { "security", "map", "{}", NULL, NULL, "transport security" },
    { "security.curve", "bool", "false", NULL, NULL,
      "encrypt and authenticate bus connections with CURVE" },
    { "security.cert_dir", "string", "\"\"", NULL, NULL,
      "directory of CURVE certificates (required when curve is on)" },
    { "security.cert", "string", "\"\"", NULL, NULL,
      "this process's private certificate (*.cert_secret); empty: CERT_DIR/<role>.cert_secret" },
    { "security.broker_cert", "string", "\"\"", NULL, NULL,
      "the broker's public certificate; empty: CERT_DIR/broker.cert" },
    { "security.allowed_dir", "string", "\"\"", NULL, NULL,
      "broker: directory of allowed public certificates, re-read on SIGHUP; empty: CERT_DIR/allowed" },
    { "security.monitor_sees_bodies", "bool", "false", NULL, NULL,
      "broker: publish task bodies and results on the bus in clear (else sealed to their submitter)" },
};

//  Environment variables starting with UFO_ that are not configuration keys.
//  Add yours here (one line) so ufo_config_apply_env does not warn about it.
static const char *const s_env_ignored [] = {
    "UFO_CONFIG",           //  names the configuration file
    "UFO_DESKTOP_SESSION",  //  set by scripts/desktop-session: the session directory
    "UFO_LOG_LEVEL",        //  read by ufo_log directly
    "UFO_LOG_JSON",         //  read by ufo_log directly
    "UFO_TEST_DATA",        //  test harness
    "UFO_SOURCE_DIR",       //  test harness
    "UFO_BUILD_DIR",        //  test harness
    "UFO_MCP_BIN",          //  test harness: the npm MCP servers' .bin folder
    "UFO_PROMPTS_DIR",      //  prompt templates directory (ufo_prompt)
    "UFO_RUN_DIR",          //  run directory of ipc endpoints and state files (ufo_bb_endpoint)
    "UFO_DEVICE",           //  device id of a container (docker/device-entrypoint)
    "UFO_APP_WORKERS",      //  AppAgent workers of a device container (docker/device-entrypoint)
    "UFO_APP",              //  application of an extra AppAgent container (docker/app-entrypoint)
    "UFO_SCREEN",           //  virtual screen size of a device container (docker/device-entrypoint)
    "UFO_AUTH_VERBOSE",     //  logs every ZAP decision (ufo_auth)
    //  The one model setting: applied to every agent block by ufo_config_apply_env
    "UFO_API_TYPE", "UFO_API_BASE", "UFO_API_KEY", "UFO_API_MODEL", "UFO_API_VERSION",
    "UFO_API_DEPLOYMENT_ID",
    NULL
};

const ufo_config_key_t *
ufo_config_schema (size_t *count_p)
{
    if (count_p)
        *count_p = UFO_ARRAY_SIZE (s_schema);
    return s_schema;
}

const ufo_config_key_t *
ufo_config_schema_find (const char *path)
{
    if (!path)
        return NULL;
    for (size_t i = 0; i < UFO_ARRAY_SIZE (s_schema); i++)
        if (strcmp (s_schema [i].path, path) == 0)
            return &s_schema [i];
    return NULL;
}

const char *const *
ufo_config_env_ignored (void)
{
    return s_env_ignored;
}
