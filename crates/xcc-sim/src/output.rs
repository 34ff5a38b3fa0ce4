//! Columnar results: what a run returns to Python (which writes Parquet) and to tests.

/// One column of a table.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    I64(Vec<i64>),
    Str(Vec<String>),
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A table: named columns of equal length, in a fixed order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<(&'static str, Column)>,
}

impl Table {
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| *n == name).map(|(_, c)| c)
    }
    pub fn f64(&self, name: &str) -> &[f64] {
        match self.column(name) {
            Some(Column::F64(v)) => v,
            _ => panic!("no f64 column {name}"),
        }
    }
    pub fn i64(&self, name: &str) -> &[i64] {
        match self.column(name) {
            Some(Column::I64(v)) => v,
            _ => panic!("no i64 column {name}"),
        }
    }
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }
}

/// Column types, for declaring a schema up front.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    F64,
    I64,
    Str,
}

/// Builds a table row by row without naming columns twice.
#[derive(Default)]
pub struct TableBuilder {
    table: Table,
}

impl TableBuilder {
    /// A builder for table `name` of the one schema (`xcc_build::schema`): its columns, in its
    /// order, with its types. Panics on a name the schema does not declare (a programming
    /// error, caught by every test that builds the table).
    pub fn for_table(name: &str) -> Self {
        let cols = crate::schema::columns(name).unwrap_or_else(|| panic!("no table {name} in the schema"));
        let cols: Vec<(&'static str, Kind)> = cols
            .iter()
            .map(|c| {
                let k = match c.dtype {
                    crate::schema::Dtype::F64 => Kind::F64,
                    crate::schema::Dtype::I64 => Kind::I64,
                    crate::schema::Dtype::Str => Kind::Str,
                };
                (c.name, k)
            })
            .collect();
        Self::with_schema(&cols)
    }

    /// A builder whose table has these columns, in this order, even if no row is added.
    pub fn with_schema(schema: &[(&'static str, Kind)]) -> Self {
        let columns = schema
            .iter()
            .map(|&(n, k)| {
                let c = match k {
                    Kind::F64 => Column::F64(Vec::new()),
                    Kind::I64 => Column::I64(Vec::new()),
                    Kind::Str => Column::Str(Vec::new()),
                };
                (n, c)
            })
            .collect();
        TableBuilder { table: Table { columns } }
    }
    pub fn f64(&mut self, name: &'static str, v: f64) -> &mut Self {
        match self.slot(name, || Column::F64(Vec::new())) {
            Column::F64(c) => c.push(v),
            _ => unreachable!("column {name} changed type"),
        }
        self
    }
    pub fn i64(&mut self, name: &'static str, v: i64) -> &mut Self {
        match self.slot(name, || Column::I64(Vec::new())) {
            Column::I64(c) => c.push(v),
            _ => unreachable!("column {name} changed type"),
        }
        self
    }
    pub fn str(&mut self, name: &'static str, v: &str) -> &mut Self {
        match self.slot(name, || Column::Str(Vec::new())) {
            Column::Str(c) => c.push(v.to_string()),
            _ => unreachable!("column {name} changed type"),
        }
        self
    }
    fn slot(&mut self, name: &'static str, new: impl FnOnce() -> Column) -> &mut Column {
        let i = match self.table.columns.iter().position(|(n, _)| *n == name) {
            Some(i) => i,
            None => {
                self.table.columns.push((name, new()));
                self.table.columns.len() - 1
            }
        };
        &mut self.table.columns[i].1
    }
    pub fn finish(self) -> Table {
        self.table
    }
}

/// Whole-run counters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RunStats {
    pub events: u64,
    pub packet_hops: u64,
    pub sim_seconds: f64,
    pub wall_seconds: f64,
}

/// Everything a run produces.
#[derive(Clone, Debug, Default)]
pub struct RunOutput {
    pub stats: RunStats,
    pub flow_series: Table,
    pub link_series: Table,
    pub flows: Table,
    pub links: Table,
    pub transactions: Table,
    /// `[sessions]` runs with a `sample_interval`: one row per sample (E_s, E_e, largest queue).
    pub session_samples: Table,
    /// The same runs: the last sample's measured and max-min rate of every rated session.
    pub session_rates: Table,
    /// `[pfc]` runs: one row per router ingress port (pause frames, time paused).
    pub pfc_ports: Table,
    /// Packets departing the captured link direction, if one was captured
    /// ([`crate::Simulation::capture_link`]).
    pub capture: Option<Vec<crate::capture::CapturedPacket>>,
}
