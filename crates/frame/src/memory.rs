//! The memory limit of a request: the placement layer's
//! [`MemoryLimit`], shared by every command, re-exported here with the
//! conversion of its refusal into [`FrameError::MemoryLimit`].
//!
//! Nothing is measured or checked here; see
//! [`numakit_placement::memory_limit`].

pub use numakit_placement::memory_limit::{
    available_to_process, human_bytes, peak_resident_bytes, resident_bytes, LimitExceeded,
    LimitOrigin, MemoryLimit, DEFAULT_SHARE_PERCENT,
};

use crate::error::FrameError;

impl From<LimitExceeded> for FrameError {
    fn from(e: LimitExceeded) -> Self {
        FrameError::MemoryLimit {
            what: e.what,
            need: e.need,
            limit: e.limit,
            in_use: e.in_use,
        }
    }
}
