//! The corpus runner: proves, per attack, which layers hold (owned by the corpus work; placeholder).
