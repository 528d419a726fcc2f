//! `mws report` figures and tables (SPEC §9): rows in, tables and JSON out. Pure.
