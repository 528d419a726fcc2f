//! Reading client transcripts into the store (SPEC §7). Adapters only parse; the driver here walks
//! the roots, reads files incrementally and hands calls to the store.
