//! Client output.
