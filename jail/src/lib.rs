//! The jail.
