//! The built-in policy's rules file, as JSON, for `Policy::builtin_default`: reading JSON is
//! several times quicker than parsing TOML, and every `warden run` and `warden check` without
//! `--rules` reads the built-in policy first.

use std::path::PathBuf;

fn main() {
    let source = PathBuf::from("../rules/default.toml");
    println!("cargo:rerun-if-changed={}", source.display());
    let text = std::fs::read_to_string(&source)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", source.display()));
    let value: toml::Value = toml::from_str(&text)
        .unwrap_or_else(|err| panic!("{} is not TOML: {err}", source.display()));
    let json = serde_json::to_string(&value)
        .unwrap_or_else(|err| panic!("{} as JSON: {err}", source.display()));
    let out =
        PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_else(|| panic!("cargo sets OUT_DIR")));
    std::fs::write(out.join("default_rules.json"), json)
        .unwrap_or_else(|err| panic!("cannot write the built-in rules as JSON: {err}"));
}
