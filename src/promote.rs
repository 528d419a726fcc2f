//! Promotion (SPEC §8): the rules that turn call history into a working set. The SQL is in
//! `store/`; this module decides.
