//! `extends`: a rules file that starts from another policy and states only what differs.
//!
//! Merge semantics, per key (documented in rules/README.md, "Extending a policy"):
//! - lists (`imports.allow`, `imports.deny`, member lists, `references.*`, `attributes.*`,
//!   `files.read`/`write`, `jail.required`/`read_only_binds`) are **added** to the base's;
//! - `[remove]` takes entries out of the inherited lists (an entry the base does not have is an error);
//! - every other setting overrides the base's when the file sets it; `[actions]` overrides rule by
//!   rule; `[runtime]` `name` and `interpreter` replace each other; `[output]` replaces the base's;
//! - FILE704's action may be set by `files.dynamic_path` or `[actions] FILE704`: in one file, both is
//!   an error; across files, the extending file's setting wins whichever key it uses.
//!
//! This module only reads and merges raw files; meaning is checked once, on the merged result.

use std::path::{Path, PathBuf};

use super::raw::{
    RawAttributes, RawFiles, RawImports, RawJail, RawLimits, RawNetwork, RawOutput, RawPolicyMeta,
    RawProcesses, RawReferences, RawRemove, RawRules, RawRuntime, RawSource,
};
use super::{locate, parse_raw, RulesError, DEFAULT_RULES};
use crate::rules::Rule;

/// How many files a chain of `extends` may hold.
const MAX_DEPTH: usize = 8;

/// The roots `files.read` and `files.write` have when a file does not set them.
pub(super) const DEFAULT_ROOTS: &[&str] = &[".", "/tmp"];

/// The layers `jail.required` has when a file does not set it.
pub(super) const DEFAULT_LAYERS: &[&str] = &["namespaces", "seccomp", "landlock", "rlimits"];

/// A rules file with what it extends merged in.
pub(super) struct Resolved {
    pub(super) raw: RawRules,
    /// The texts it was made from, the file's own first: the policy's digest covers them all.
    pub(super) texts: Vec<String>,
    /// What is wrong with the file itself (unreadable keys set aside, `[remove]` entries the base does
    /// not have…); validation of the merged settings adds its own.
    pub(super) errors: Vec<RulesError>,
}

/// Reads `text` and, when it extends another policy, that policy (recursively), merged.
pub(super) fn resolve(text: &str, base_dir: Option<&Path>) -> Result<Resolved, RulesError> {
    resolve_at(text, base_dir, 0, &mut Vec::new())
}

fn resolve_at(
    text: &str,
    base_dir: Option<&Path>,
    depth: usize,
    seen: &mut Vec<PathBuf>,
) -> Result<Resolved, RulesError> {
    let (raw, mut errors) = parse_raw(text);
    let Some(mut raw) = raw else {
        return Err(combined(errors, text));
    };
    errors.extend(dynamic_path_set_twice(&raw));
    if depth > 0 {
        // A base's schema file is relative to the base, not to the file that extends it.
        if let (Some(file), Some(dir)) = (&raw.output.schema_file, base_dir) {
            raw.output.schema_file = Some(dir.join(file).display().to_string());
        }
    }
    let Some(target) = raw.extends.clone() else {
        if !is_empty(&raw.remove) {
            errors.push(RulesError::at_key(
                "remove",
                "`[remove]` takes entries out of inherited lists: it needs `extends`",
            ));
        }
        return Ok(Resolved {
            raw,
            texts: vec![text.to_owned()],
            errors,
        });
    };
    let at_extends = |message: String| locate(RulesError::at_key("extends", message), text);
    if depth + 1 >= MAX_DEPTH {
        return Err(at_extends(format!(
            "a chain of `extends` may hold at most {MAX_DEPTH} files"
        )));
    }
    let (base_text, base_base_dir, label) = if target == "default" {
        (
            DEFAULT_RULES.to_owned(),
            None,
            "the built-in policy `default`".to_owned(),
        )
    } else {
        let path = base_dir.map_or_else(|| PathBuf::from(&target), |dir| dir.join(&target));
        let canonical = path
            .canonicalize()
            .map_err(|err| at_extends(format!("cannot read {}: {err}", path.display())))?;
        if seen.contains(&canonical) {
            return Err(at_extends(format!(
                "{} is already in this chain of `extends` (a cycle)",
                path.display()
            )));
        }
        seen.push(canonical.clone());
        let base_text = std::fs::read_to_string(&canonical)
            .map_err(|err| at_extends(format!("cannot read {}: {err}", path.display())))?;
        let dir = canonical.parent().map(Path::to_owned);
        (base_text, dir, path.display().to_string())
    };
    let base = resolve_at(&base_text, base_base_dir.as_deref(), depth + 1, seen)
        .and_then(|base| match RulesError::combine(base.errors.clone()) {
            Some(error) => Err(error),
            None => Ok(base),
        })
        .map_err(|err| wrap_base_errors(err, &label, text))?;
    let (merged, removal_errors) = merge(base.raw, raw);
    errors.extend(removal_errors);
    let mut texts = vec![text.to_owned()];
    texts.extend(base.texts);
    Ok(Resolved {
        raw: merged,
        texts,
        errors,
    })
}

fn combined(errors: Vec<RulesError>, text: &str) -> RulesError {
    let error = RulesError::combine(errors)
        .unwrap_or_else(|| RulesError::at_key("", "the rules file could not be read"));
    locate(error, text)
}

/// Errors of a base file, reported at the `extends` key of the file that names it.
fn wrap_base_errors(error: RulesError, label: &str, text: &str) -> RulesError {
    let all: Vec<RulesError> = error
        .all()
        .map(|inner| {
            let mut one = inner.clone();
            one.more.clear();
            locate(
                RulesError::at_key("extends", format!("in {label}: {one}")),
                text,
            )
        })
        .collect();
    RulesError::combine(all).unwrap_or(error)
}

/// `files.dynamic_path` and `[actions] FILE704` both set in one file.
fn dynamic_path_set_twice(raw: &RawRules) -> Option<RulesError> {
    raw.files.dynamic_path.as_ref()?;
    let key = raw
        .actions
        .keys()
        .find(|id| Rule::from_id(id) == Some(Rule::DynamicPath))?;
    Some(RulesError::at_key(
        format!("actions.{key}"),
        "FILE704's action is set twice in this file, here and by `files.dynamic_path`: keep one",
    ))
}

fn is_empty(remove: &RawRemove) -> bool {
    let RawRemove {
        imports,
        references,
        attributes,
        files,
        jail,
    } = remove;
    imports.allow.is_empty()
        && imports.deny.is_empty()
        && imports.members.is_empty()
        && references.deny.is_empty()
        && references.deny_methods.is_empty()
        && attributes.allow_dunder.is_empty()
        && attributes.allow_dunder_definitions.is_empty()
        && attributes.deny_names.is_empty()
        && files.read.is_empty()
        && files.write.is_empty()
        && jail.required.is_empty()
        && jail.read_only_binds.is_empty()
}

/// The base with the file's `[remove]` applied and the file's settings merged in, and the `[remove]`
/// entries the base does not have. Every table is taken apart field by field, so that a key added to
/// the rules file cannot be forgotten here (it would not compile).
fn merge(mut base: RawRules, file: RawRules) -> (RawRules, Vec<RulesError>) {
    let errors = remove_inherited(&mut base, &file.remove);
    let mut out = base;
    out.extends = None;
    let RawRules {
        extends: _,
        policy,
        source,
        imports,
        references,
        attributes,
        files,
        network,
        processes,
        actions,
        runtime,
        limits,
        jail,
        output,
        remove: _,
    } = file;
    let RawPolicyMeta {
        name,
        description,
        target_python,
    } = policy;
    out.policy.name = name.or_else(|| out.policy.name.map(|name| format!("{name}-extended")));
    over(&mut out.policy.description, description);
    over(&mut out.policy.target_python, target_python);
    let RawSource {
        max_bytes,
        max_depth,
        max_nodes,
    } = source;
    over(&mut out.source.max_bytes, max_bytes);
    over(&mut out.source.max_depth, max_depth);
    over(&mut out.source.max_nodes, max_nodes);
    let RawImports {
        allow,
        deny,
        members,
    } = imports;
    append(&mut out.imports.allow, allow);
    append(&mut out.imports.deny, deny);
    for (module, members) in members {
        append(out.imports.members.entry(module).or_default(), members);
    }
    let RawReferences { deny, deny_methods } = references;
    append(&mut out.references.deny, deny);
    append(&mut out.references.deny_methods, deny_methods);
    let RawAttributes {
        allow_dunder,
        allow_dunder_definitions,
        deny_names,
    } = attributes;
    append_optional(&mut out.attributes.allow_dunder, allow_dunder, &[]);
    append_optional(
        &mut out.attributes.allow_dunder_definitions,
        allow_dunder_definitions,
        &[],
    );
    append(&mut out.attributes.deny_names, deny_names);
    let RawFiles {
        read,
        write,
        dynamic_path,
        inputs_writable,
    } = files;
    append_optional(&mut out.files.read, read, DEFAULT_ROOTS);
    append_optional(&mut out.files.write, write, DEFAULT_ROOTS);
    over(&mut out.files.inputs_writable, inputs_writable);
    // FILE704: the extending file's setting wins, whichever of its two keys it uses.
    let sets_file704 = dynamic_path.is_some()
        || actions
            .keys()
            .any(|id| Rule::from_id(id) == Some(Rule::DynamicPath));
    if sets_file704 {
        out.files.dynamic_path = None;
        out.actions
            .retain(|id, _| Rule::from_id(id) != Some(Rule::DynamicPath));
    }
    over(&mut out.files.dynamic_path, dynamic_path);
    out.actions.extend(actions);
    let RawNetwork { allow } = network;
    over(&mut out.network.allow, allow);
    let RawProcesses { allow } = processes;
    over(&mut out.processes.allow, allow);
    let RawRuntime {
        interpreter,
        name,
        hooks,
        preload,
    } = runtime;
    if name.is_some() || interpreter.is_some() {
        out.runtime.name = name;
        out.runtime.interpreter = interpreter;
    }
    over(&mut out.runtime.hooks, hooks);
    over(&mut out.runtime.preload, preload);
    let RawLimits {
        wall_time_ms,
        cpu_time_ms,
        memory_mib,
        pids,
        stdout_bytes,
        stderr_bytes,
        file_size_mib,
        open_files,
        tmp_mib,
        output_files,
        output_mib,
        memory_enforcement,
    } = limits;
    let base_limits = &mut out.limits;
    over(&mut base_limits.wall_time_ms, wall_time_ms);
    over(&mut base_limits.cpu_time_ms, cpu_time_ms);
    over(&mut base_limits.memory_mib, memory_mib);
    over(&mut base_limits.pids, pids);
    over(&mut base_limits.stdout_bytes, stdout_bytes);
    over(&mut base_limits.stderr_bytes, stderr_bytes);
    over(&mut base_limits.file_size_mib, file_size_mib);
    over(&mut base_limits.open_files, open_files);
    over(&mut base_limits.tmp_mib, tmp_mib);
    over(&mut base_limits.output_files, output_files);
    over(&mut base_limits.output_mib, output_mib);
    over(&mut base_limits.memory_enforcement, memory_enforcement);
    let RawJail {
        required,
        read_only_binds,
    } = jail;
    append_optional(&mut out.jail.required, required, DEFAULT_LAYERS);
    append(&mut out.jail.read_only_binds, read_only_binds);
    let RawOutput {
        schema,
        schema_file,
        result,
    } = output;
    if schema.is_some() || schema_file.is_some() {
        out.output = RawOutput {
            schema,
            schema_file,
            result: out.output.result.take(),
        };
    }
    over(&mut out.output.result, result);
    (out, errors)
}

fn over<T>(base: &mut Option<T>, value: Option<T>) {
    if value.is_some() {
        *base = value;
    }
}

/// Adds the entries of `more` that `list` does not have yet, in order.
fn append(list: &mut Vec<String>, more: Vec<String>) {
    for entry in more {
        if !list.contains(&entry) {
            list.push(entry);
        }
    }
}

/// [`append`] to a list that has `default` when the base does not set it.
fn append_optional(list: &mut Option<Vec<String>>, more: Option<Vec<String>>, default: &[&str]) {
    let Some(more) = more else { return };
    let mut merged = list
        .take()
        .unwrap_or_else(|| default.iter().map(|s| (*s).to_owned()).collect());
    append(&mut merged, more);
    *list = Some(merged);
}

/// Applies `[remove]` to the inherited lists; every entry must be there.
fn remove_inherited(base: &mut RawRules, remove: &RawRemove) -> Vec<RulesError> {
    let mut errors = Vec::new();
    let mut take = |list: &mut Vec<String>, entries: &[String], key: &str| {
        for (index, entry) in entries.iter().enumerate() {
            match list.iter().position(|item| item.trim() == entry.trim()) {
                Some(position) => {
                    list.remove(position);
                }
                None => errors.push(RulesError::at_key(
                    format!("{key}[{index}]"),
                    format!(
                        "{entry:?} is not in the inherited `{}`",
                        &key["remove.".len()..]
                    ),
                )),
            }
        }
    };
    take(
        &mut base.imports.allow,
        &remove.imports.allow,
        "remove.imports.allow",
    );
    take(
        &mut base.imports.deny,
        &remove.imports.deny,
        "remove.imports.deny",
    );
    for (module, members) in &remove.imports.members {
        let key = format!("remove.imports.members.{module}");
        match base.imports.members.get_mut(module) {
            Some(list) => take(list, members, &key),
            None => take(&mut Vec::new(), members, &key),
        }
    }
    take(
        &mut base.references.deny,
        &remove.references.deny,
        "remove.references.deny",
    );
    take(
        &mut base.references.deny_methods,
        &remove.references.deny_methods,
        "remove.references.deny_methods",
    );
    let mut optional =
        |list: &mut Option<Vec<String>>, entries: &[String], key: &str, default: &[&str]| {
            if entries.is_empty() {
                return;
            }
            let mut owned = list
                .take()
                .unwrap_or_else(|| default.iter().map(|s| (*s).to_owned()).collect());
            take(&mut owned, entries, key);
            *list = Some(owned);
        };
    optional(
        &mut base.attributes.allow_dunder,
        &remove.attributes.allow_dunder,
        "remove.attributes.allow_dunder",
        &[],
    );
    optional(
        &mut base.attributes.allow_dunder_definitions,
        &remove.attributes.allow_dunder_definitions,
        "remove.attributes.allow_dunder_definitions",
        &[],
    );
    optional(
        &mut base.files.read,
        &remove.files.read,
        "remove.files.read",
        DEFAULT_ROOTS,
    );
    optional(
        &mut base.files.write,
        &remove.files.write,
        "remove.files.write",
        DEFAULT_ROOTS,
    );
    optional(
        &mut base.jail.required,
        &remove.jail.required,
        "remove.jail.required",
        DEFAULT_LAYERS,
    );
    take(
        &mut base.attributes.deny_names,
        &remove.attributes.deny_names,
        "remove.attributes.deny_names",
    );
    take(
        &mut base.jail.read_only_binds,
        &remove.jail.read_only_binds,
        "remove.jail.read_only_binds",
    );
    errors
}
