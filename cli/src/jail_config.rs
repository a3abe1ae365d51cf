//! Maps the validated policy to the jail's configuration (owned by the jail work; placeholder).
