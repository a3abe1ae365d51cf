//! The rules file exactly as written: serde structures with no defaults resolved and no meaning checked.
//!
//! Every table denies unknown keys, so a typo is an error with its line, column and key path rather than a
//! silently ignored setting. Only [`super::Policy::from_raw`] reads these structures.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The whole rules file.
#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "warden rules file")]
pub struct RawRules {
    /// The policy this file starts from: "default" (the built-in policy) or a path relative to this
    /// file. The file then states only what differs: lists are added to the base's, `[remove]` takes
    /// entries out of them, and every other setting overrides the base's (rules/README.md).
    #[serde(default)]
    pub extends: Option<String>,
    /// Name and description of the policy.
    #[serde(default)]
    pub policy: RawPolicyMeta,
    /// Source decoding and size bounds.
    #[serde(default)]
    pub source: RawSource,
    /// Which modules the program may import.
    #[serde(default)]
    pub imports: RawImports,
    /// Qualified names and method names the program may not reference.
    #[serde(default)]
    pub references: RawReferences,
    /// Dunder and private attribute allowlists.
    #[serde(default)]
    pub attributes: RawAttributes,
    /// Which paths the program may read and write.
    #[serde(default)]
    pub files: RawFiles,
    /// Network access.
    #[serde(default)]
    pub network: RawNetwork,
    /// Whether the program may start processes.
    #[serde(default)]
    pub processes: RawProcesses,
    /// Per-rule action overrides: rule id (e.g. "FILE704") to "deny", "review", "warn" or "off".
    #[serde(default)]
    #[schemars(schema_with = "super::schema::actions")]
    pub actions: BTreeMap<String, String>,
    /// The interpreter that runs the program.
    #[serde(default)]
    pub runtime: RawRuntime,
    /// Resource limits of one run.
    #[serde(default)]
    pub limits: RawLimits,
    /// Confinement layers the jail must enforce.
    #[serde(default)]
    pub jail: RawJail,
    /// What the program's standard output must look like.
    #[serde(default)]
    pub output: RawOutput,
    /// Entries to take out of the lists inherited through `extends` (same tables and keys).
    #[serde(default)]
    pub remove: RawRemove,
}

#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "policy")]
pub struct RawPolicyMeta {
    /// Short name shown in reports (e.g. "default"). Required unless the file `extends` another; then
    /// it defaults to the base's name followed by `-extended`.
    #[serde(default)]
    pub name: Option<String>,
    /// One or two sentences for humans.
    #[serde(default)]
    pub description: Option<String>,
    /// The Python version the program must run on, "3.MINOR". Syntax newer than this is denied.
    #[serde(default)]
    pub target_python: Option<String>,
}

#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "source")]
pub struct RawSource {
    /// Largest accepted program, in bytes (default 1048576).
    pub max_bytes: Option<u64>,
    /// Deepest accepted nesting of expressions and blocks (default 200).
    pub max_depth: Option<u32>,
    /// Most AST nodes accepted (default 500000).
    pub max_nodes: Option<u64>,
}

#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "imports")]
pub struct RawImports {
    /// Module patterns that may be imported: "numpy" is exactly numpy, "numpy.*" any submodule of it.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Module patterns that may never be imported; a deny always wins over an allow.
    #[serde(default)]
    pub deny: Vec<String>,
    /// For allowed modules that are dangerous as a whole (`os`, `builtins`): the only members the
    /// program may use, by module path. `{ os = ["path", "getcwd"] }` allows `os.getcwd` but not
    /// `os.system`.
    #[serde(default)]
    pub members: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "references")]
pub struct RawReferences {
    /// Qualified names that may not be referenced anywhere: "os.system", "subprocess.*", "builtins.exec".
    #[serde(default)]
    pub deny: Vec<String>,
    /// Method names denied whatever their receiver (e.g. "to_pickle"): the checker cannot know types.
    #[serde(default)]
    pub deny_methods: Vec<String>,
}

#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "attributes")]
pub struct RawAttributes {
    /// Dunder names that may be read anywhere (e.g. "__name__"). Absent: the built-in default
    /// policy's list (an empty list is written `[]`).
    pub allow_dunder: Option<Vec<String>>,
    /// Dunder methods a class body may define (e.g. "__init__", "__repr__"). Absent: the built-in
    /// default policy's list.
    pub allow_dunder_definitions: Option<Vec<String>>,
    /// Attribute names denied on any receiver, with or without leading underscores: objects keep modules
    /// as attributes (`err.obj._os`, `arr.ctypes._ctypes`).
    #[serde(default)]
    pub deny_names: Vec<String>,
}

#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "files")]
pub struct RawFiles {
    /// Roots the program may read: "." is the work dir, other entries are absolute paths in the jail.
    pub read: Option<Vec<String>>,
    /// Roots the program may write.
    pub write: Option<Vec<String>>,
    /// Action for a path the checker cannot compute: "deny", "review", "warn" or "off" (default "warn").
    #[serde(default)]
    #[schemars(schema_with = "super::schema::action")]
    pub dynamic_path: Option<String>,
    /// Whether `--input` files are writable by the program (default false: read-only).
    pub inputs_writable: Option<bool>,
}

#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "network")]
pub struct RawNetwork {
    /// Whether the program may use the network at all (default false). warden has no egress filter, so
    /// true is refused unless the jail's network namespace is also dropped deliberately.
    pub allow: Option<bool>,
}

#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "processes")]
pub struct RawProcesses {
    /// Whether the program may start processes: subprocess, os.system, exec, spawn, fork (default
    /// false). When false, the runtime layer denies them with a message and the kernel refuses
    /// execve and process creation once the interpreter runs.
    pub allow: Option<bool>,
}

#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "runtime")]
pub struct RawRuntime {
    /// Absolute path of the Python interpreter (default "/usr/bin/python3").
    pub interpreter: Option<String>,
    /// Name of a runtime provisioned by `warden runtime` (takes precedence over `interpreter`).
    pub name: Option<String>,
    /// The runtime layer: warden's native audit hook, installed in the interpreter before the program
    /// runs, enforcing this file's imports, files, processes, network and deserialisation at the
    /// sinks. "required" (default: the run is refused when it cannot be installed), "on" (installed
    /// when warden's hook library is found) or "off".
    #[serde(default)]
    #[schemars(schema_with = "super::schema::hooks")]
    pub hooks: Option<String>,
    /// Modules a pre-started (pooled) interpreter of `warden serve` and `warden mcp` imports before
    /// any program arrives, after the runtime layer is in force (e.g. ["numpy", "pandas",
    /// "matplotlib.pyplot"]). Each must be an import this policy allows. `warden run` never
    /// preloads. Default: none.
    pub preload: Option<Vec<String>>,
}

#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "limits")]
pub struct RawLimits {
    /// Wall-clock time of the whole run, in milliseconds (default 10000).
    pub wall_time_ms: Option<u64>,
    /// CPU time of the program, in milliseconds (default 10000).
    pub cpu_time_ms: Option<u64>,
    /// Memory of the program's process tree, in MiB (default 1024).
    pub memory_mib: Option<u64>,
    /// Most processes and threads at once (default 64).
    pub pids: Option<u64>,
    /// Bytes of standard output kept (default 1048576).
    pub stdout_bytes: Option<u64>,
    /// Bytes of standard error kept (default 262144).
    pub stderr_bytes: Option<u64>,
    /// Largest file the program may write, in MiB (default 64).
    pub file_size_mib: Option<u64>,
    /// Most open file descriptors (default 256).
    pub open_files: Option<u64>,
    /// Size of the private /tmp, in MiB (default 64).
    pub tmp_mib: Option<u64>,
    /// Most output files collected (default 32).
    pub output_files: Option<u64>,
    /// Total bytes of output files collected, in MiB (default 64).
    pub output_mib: Option<u64>,
    /// What a run does when the host cannot enforce `memory_mib` with a memory cgroup (an
    /// ordinary user without a delegated cgroup): "strict" (default: the run is refused,
    /// `setup_failed`) or "best-effort" (RLIMIT_AS of a single process; new processes, memfds and
    /// System V shared memory are refused; the record says `layers.memory: best-effort`).
    #[serde(default)]
    #[schemars(schema_with = "super::schema::memory_enforcement")]
    pub memory_enforcement: Option<String>,
}

#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "jail")]
pub struct RawJail {
    /// Layers that must be enforced or the run is refused: "namespaces", "seccomp", "landlock",
    /// "cgroup", "rlimits" (default: all but "cgroup").
    #[serde(default)]
    #[schemars(schema_with = "super::schema::layers")]
    pub required: Option<Vec<String>>,
    /// Extra host paths bound read-only into the jail (absolute).
    #[serde(default)]
    pub read_only_binds: Vec<String>,
}

#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "output")]
pub struct RawOutput {
    /// A JSON Schema that standard output must satisfy (as an inline TOML table).
    #[serde(default)]
    #[schemars(schema_with = "super::schema::output_schema")]
    pub schema: Option<toml::Table>,
    /// Path of a JSON Schema file, relative to the rules file.
    pub schema_file: Option<String>,
    /// Where the result the schema judges is read from: `stdout`, `last_line` or `file`.
    #[serde(default)]
    #[schemars(schema_with = "super::schema::output_result")]
    pub result: Option<String>,
}

/// `[remove]`: entries taken out of the lists a file inherits through `extends`.
#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "remove")]
pub struct RawRemove {
    #[serde(default)]
    pub imports: RawRemoveImports,
    #[serde(default)]
    pub references: RawReferences,
    #[serde(default)]
    pub attributes: RawRemoveAttributes,
    #[serde(default)]
    pub files: RawRemoveFiles,
    #[serde(default)]
    pub jail: RawRemoveJail,
}

#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "remove.imports")]
pub struct RawRemoveImports {
    /// Patterns to take out of the inherited `imports.allow`.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Patterns to take out of the inherited `imports.deny` (to allow a module the base denies).
    #[serde(default)]
    pub deny: Vec<String>,
    /// Members to take out of inherited member lists, by module.
    #[serde(default)]
    pub members: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "remove.files")]
pub struct RawRemoveFiles {
    /// Roots to take out of the inherited `files.read`.
    #[serde(default)]
    pub read: Vec<String>,
    /// Roots to take out of the inherited `files.write`.
    #[serde(default)]
    pub write: Vec<String>,
}

#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "remove.jail")]
pub struct RawRemoveJail {
    /// Layers to take out of the inherited `jail.required`.
    #[serde(default)]
    #[schemars(schema_with = "super::schema::layers")]
    pub required: Vec<String>,
    /// Paths to take out of the inherited `jail.read_only_binds`.
    #[serde(default)]
    pub read_only_binds: Vec<String>,
}

#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "remove.attributes")]
pub struct RawRemoveAttributes {
    /// Names to take out of the inherited `attributes.allow_dunder`.
    #[serde(default)]
    pub allow_dunder: Vec<String>,
    /// Names to take out of the inherited `attributes.allow_dunder_definitions`.
    #[serde(default)]
    pub allow_dunder_definitions: Vec<String>,
    /// Names to take out of the inherited `attributes.deny_names`.
    #[serde(default)]
    pub deny_names: Vec<String>,
}
