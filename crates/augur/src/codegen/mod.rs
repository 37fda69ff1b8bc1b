//! Code generators.
