//! The algorithms, one folder each: everything that *is* an algorithm lives in its folder — its
//! link law (`link.rs`, what a router runs per output port), its host law (`host.rs`, the
//! sender's controller and the receiver's echoer), its header (`header.rs`, an `impl
//! HeaderBody`), its session form (`session.rs`, seed 004's tasks) and its typed parameters
//! (`mod.rs`: serde structs with defaults citing their source and a `check()` naming the field),
//! for whichever roles it plays. Unit tests from the paper's equations sit beside the law.
//!
//! docs/architecture.md, "Adding an algorithm", is the recipe.

// Not in the registry: the lossless fabric's ingress rule, which the link model and the
// simulator drive when `[pfc]` turns it on at every router (PFC is not an algorithm a scenario
// names per link).
pub mod pfc;

/// The registry: one line per algorithm, every role it plays. Everything that lists algorithms
/// comes from it, through [`crate::for_each_algorithm!`]: the link, sender, echoer and header enums of
/// this crate, the scenario entries of `xcc-build` (`queue = `, `cc = `, a session's
/// `protocol = `), the session drivers' dispatch, the names in errors and `xcc list`, the
/// dissector's table and the docs' tables.
///
/// A line is `"name" module { role; ... }`, the roles in this order, each optional:
/// - `link: Variant(RouterType, ParamsType) as "tag";` a link algorithm (`queue = "name"`);
///   `ParamsType` is its scenario entry (`impl params::LinkParams`), `tag` the `kind` that
///   `run.json` records;
/// - `host: Variant(ControllerType, ParamsType) as "tag";` a sender (`cc = "name"`), its entry
///   an `impl params::HostParams`;
/// - `echo: Variant(EchoerType);` a receiver that does more than copy the header back;
/// - `header: Variant(HeaderType);` a congestion header on the wire (`impl HeaderBody`);
/// - `session: Variant(ProtocolType, ParamsType);` seed 004's session form (`impl
///   SessionWire`).
///
/// The types are named inside the algorithm's module (`crate::algorithms::module::Type`).
#[macro_export]
macro_rules! for_each_algorithm {
    ($callback:ident) => {
        $callback! {
            "droptail" droptail { link: DropTail(DropTail, DropTailParams) as "drop_tail"; }
            "red" red { link: Red(Red, RedParams) as "red"; }
            "markmax" markmax { link: MarkMax(MarkMax, MarkMaxParams) as "markmax"; }
            "newreno" newreno { host: NewReno(NewReno, NewRenoParams) as "new_reno"; }
            "maxnet" maxnet {
                link: MaxNet(MaxNetRouter, MaxNetRouterParams) as "maxnet";
                host: MaxNet(MaxNet, MaxNetCcParams) as "maxnet";
                echo: MaxNet(MaxNetEcho);
                header: MaxNet(MaxNetHeader);
            }
            "xcp" xcp {
                link: Xcp(XcpRouter, XcpRouterParams) as "xcp";
                host: Xcp(Xcp, XcpCcParams) as "xcp";
                echo: Xcp(XcpEcho);
                header: Xcp(XcpHeader);
            }
            "rcp" rcp {
                link: Rcp(RcpRouter, RcpRouterParams) as "rcp";
                host: Rcp(Rcp, RcpCcParams) as "rcp";
                header: Rcp(RcpHeader);
                session: Rcp(RcpSession, RcpSessionParams);
            }
            "piqi-rcp" piqi_rcp {
                link: PiqiRcp(PiqiRcpRouter, PiqiRcpRouterParams) as "piqi-rcp";
                host: PiqiRcp(PiqiRcp, PiqiRcpCcParams) as "piqi-rcp";
                header: PiqiRcp(PiqiRcpHeader);
                session: PiqiRcp(PiqiRcpSession, PiqiRcpSessionParams);
            }
            "jetmax" jetmax {
                link: JetMax(JetMaxRouter, JetMaxRouterParams) as "jetmax";
                host: JetMax(JetMax, JetMaxCcParams) as "jetmax";
                header: JetMax(JetMaxHeader);
            }
            "cubic" cubic { host: Cubic(Cubic, CubicParams) as "cubic"; }
            "bbr" bbr { host: Bbr(BoxedBbr, BbrParams) as "bbr"; }
            "slbn" slbn { session: Slbn(Slbn, SlbnParams); }
            "erica" erica { session: Erica(Erica, EricaParams); }
            "bfyz" bfyz { session: Bfyz(Bfyz, BfyzParams); }
            "cobb" cobb { session: Cobb(Cobb, CobbParams); }
            "int" int { header: Int(IntHeader); }
            "hpcc" hpcc { host: Hpcc(Hpcc, HpccCcParams) as "hpcc"; }
            "powertcp" powertcp { host: PowerTcp(PowerTcp, PowerTcpCcParams) as "powertcp"; }
            "dctcp" dctcp { link: Dctcp(DctcpMarker, DctcpQueueParams) as "dctcp"; host: Dctcp(Dctcp, DctcpParams) as "dctcp"; echo: Dctcp(DctcpEcho); }
            "dcqcn" dcqcn { link: Dcqcn(DcqcnMarker, DcqcnQueueParams) as "dcqcn"; host: Dcqcn(Dcqcn, DcqcnParams) as "dcqcn"; echo: Dcqcn(DcqcnEcho); }
        }
    };
}

/// `second!(role, tokens)` expands to `tokens`: lets a registry consumer emit something that
/// does not name a role's fields (the algorithm's name) once per line *with* that role.
#[doc(hidden)]
#[macro_export]
macro_rules! second {
    ($first:tt, $($rest:tt)*) => {
        $($rest)*
    };
}

macro_rules! declare_modules {
    ( $( $name:literal $m:ident { $($roles:tt)* } )* ) => {
        $( pub mod $m; )*
    };
}

// Every registered algorithm's folder is a module of this one (the registry line declares it).
for_each_algorithm!(declare_modules);

/// One algorithm as the registry lists it: its name and the roles it plays.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct AlgorithmInfo {
    /// The one spelling scenarios, `xcc list`, `run.json` and Python use.
    pub name: &'static str,
    /// Its folder under `crates/xcc-core/src/algorithms/`.
    pub module: &'static str,
    pub link: bool,
    pub host: bool,
    pub header: bool,
    pub session: bool,
}

macro_rules! algorithm_infos {
    ( $( $name:literal $m:ident {
        $( link: $LV:ident($LT:ident, $LP:ident) as $ltag:literal; )?
        $( host: $HV:ident($HT:ident, $HP:ident) as $htag:literal; )?
        $( echo: $EV:ident($ET:ident); )?
        $( header: $XV:ident($XT:ident); )?
        $( session: $SV:ident($ST:ident, $SP:ident); )?
    } )* ) => {
        /// Every registered algorithm, in registry order.
        pub const ALGORITHMS: &[AlgorithmInfo] = &[ $( AlgorithmInfo {
            name: $name,
            module: stringify!($m),
            link: false $( || stringify!($LV).len() > 0 )?,
            host: false $( || stringify!($HV).len() > 0 )?,
            header: false $( || stringify!($XV).len() > 0 )?,
            session: false $( || stringify!($SV).len() > 0 )?,
        } ),* ];
    };
}

for_each_algorithm!(algorithm_infos);

/// The registered algorithm named `name`, if any.
pub fn by_name(name: &str) -> Option<&'static AlgorithmInfo> {
    ALGORITHMS.iter().find(|a| a.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names and folders are unique; a name is its folder with `-` for `_`.
    #[test]
    fn one_spelling_per_algorithm() {
        for (i, a) in ALGORITHMS.iter().enumerate() {
            assert!(ALGORITHMS[i + 1..].iter().all(|b| b.name != a.name && b.module != a.module), "{a:?}");
            assert_eq!(a.name.replace('-', "_"), a.module);
            assert!(a.link || a.host || a.header || a.session, "{} plays no role", a.name);
        }
        assert!(by_name("piqi-rcp").is_some_and(|a| a.link && a.host && a.session));
        assert!(by_name("piqi_rcp").is_none());
    }
}
