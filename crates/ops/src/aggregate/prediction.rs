//! What the simulator predicted when the automatic choice weighed Li's
//! methods on several nodes: the figures, the model they came from, and
//! the rule that breaks near ties. `across_nodes` makes the prediction,
//! plans carry it, reports print it; this module only holds it.

use numakit_sim::ModelFit;
use serde::Serialize;

use crate::aggregate::AggMethod;

/// Predictions within this share of the fastest count as tied: the model
/// reproduces Li's figures to a few per cent (and leaves the ring and
/// migration within 2% of each other for large tables on four sockets,
/// where Li measured the ring ahead).
pub const TIE_SHARE: f64 = 0.03;

/// One method's predicted time.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PredictedMethod {
    /// The method.
    pub method: AggMethod,
    /// The simulator's time for the whole aggregation, in seconds (an
    /// upper bound on speed: hashing and adding cost nothing in the model).
    pub seconds: f64,
}

/// What the simulator predicted for the choice across nodes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExchangePrediction {
    /// The model machine's name.
    pub model: String,
    /// Figures the model machine did not describe and were assumed (empty
    /// for a described or probed machine).
    pub assumptions: Vec<String>,
    /// Whether the model's constants apply to the model machine, and why not.
    pub fit: ModelFit,
    /// Nodes and workers per node the schedules ran over.
    pub nodes: usize,
    /// Workers per node in the model.
    pub workers_per_node: usize,
    /// Estimated distinct keys per partition (one partition per worker).
    pub keys_per_partition: f64,
    /// Rows the model aggregated (this input's).
    pub rows: u64,
    /// Cache room of one worker the model used: what this machine
    /// measured usable (private cache plus a share of the last level).
    pub cache_bytes_per_worker: u64,
    /// Shuffle, migration and migration & copy, in that order.
    pub methods: Vec<PredictedMethod>,
}

impl ExchangePrediction {
    /// The method predicted fastest.
    pub fn fastest(&self) -> Option<PredictedMethod> {
        self.methods
            .iter()
            .copied()
            .min_by(|a, b| a.seconds.total_cmp(&b.seconds))
    }

    /// The methods within [`TIE_SHARE`] of the fastest, in the tie-break
    /// order (shuffle, migration, migration & copy).
    pub fn tied(&self) -> Vec<PredictedMethod> {
        let Some(best) = self.fastest() else {
            return Vec::new();
        };
        self.methods
            .iter()
            .copied()
            .filter(|m| m.seconds <= best.seconds * (1.0 + TIE_SHARE))
            .collect()
    }

    /// The method to run: the first of the tied ones.
    pub fn chosen(&self) -> Option<PredictedMethod> {
        self.tied().first().copied()
    }
}
