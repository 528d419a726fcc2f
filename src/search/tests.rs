//! Tests of the search modes and the reply budget on fixture catalogs.
