//! The radix joins PRO and CPRL (placeholder until built).

use numakit_pool::Pool;

use crate::error::{OpsError, Result};
use crate::join::{JoinOptions, JoinResult};
use crate::relation::Relation;
use crate::timing::Progress;

pub fn join(
    _pool: &Pool,
    _left: &Relation,
    _right: &Relation,
    _opts: &JoinOptions,
    _progress: &dyn Progress,
) -> Result<JoinResult> {
    Err(OpsError::InvalidArgument(
        "the radix join is not built yet".into(),
    ))
}
