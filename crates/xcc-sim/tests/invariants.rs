//! Property tests: random small scenarios (chains of routers, any mix of bulk, CBR, Poisson and
//! request/response traffic, DropTail or RED, random loss and jitter) must run without breaking
//! the end-of-run invariants (packet conservation, queue bookkeeping), never deliver more than
//! a sized flow holds, and give identical results when run twice.

use proptest::prelude::*;
use xcc_sim::{run_text, Format};

#[derive(Debug, Clone)]
struct Spec {
    routers: usize,
    rate_mbps: u32,
    delay_us: u32,
    buffer_pkt: u32,
    red: bool,
    ecn: bool,
    sack: bool,
    delayed_ack: bool,
    loss: f64,
    jitter_us: u32,
    flows: Vec<(u8, u32, u32)>,
    seed: u64,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        (1usize..4, 1u32..50, 0u32..5_000, 2u32..100, any::<bool>(), any::<bool>()),
        (any::<bool>(), any::<bool>(), prop_oneof![Just(0.0), 0.0..0.05f64], prop_oneof![Just(0u32), 0u32..200]),
        prop::collection::vec((0u8..4, 1u32..200_000, 0u32..500), 1..5),
        any::<u64>(),
    )
        .prop_map(
            |(
                (routers, rate_mbps, delay_us, buffer_pkt, red, ecn),
                (sack, delayed_ack, loss, jitter_us),
                flows,
                seed,
            )| Spec {
                routers,
                rate_mbps,
                delay_us,
                buffer_pkt,
                red,
                ecn,
                sack,
                delayed_ack,
                loss,
                jitter_us,
                flows,
                seed,
            },
        )
}

fn toml(s: &Spec) -> String {
    let mut t = format!("name = \"prop\"\nduration = \"2s\"\nseed = {}\n", s.seed % 1000);
    t += "[[host]]\nname = \"a\"\n[[host]]\nname = \"b\"\n";
    for r in 0..s.routers {
        t += &format!("[[router]]\nname = \"r{r}\"\n");
    }
    let queue = if s.red {
        let min = (s.buffer_pkt / 4).max(1);
        format!(
            "{{ kind = \"red\", min_th = \"{min}pkt\", max_th = \"{}pkt\", action = \"mark\", w_q = 0.01 }}",
            min * 3
        )
    } else {
        "\"droptail\"".to_string()
    };
    let mut nodes = vec!["a".to_string()];
    nodes.extend((0..s.routers).map(|r| format!("r{r}")));
    nodes.push("b".to_string());
    for w in nodes.windows(2) {
        t += &format!(
            "[[link]]\nbetween = [\"{}\", \"{}\"]\nrate = \"{}Mbps\"\ndelay = \"{}us\"\nbuffer = \"{}pkt\"\nqueue = {}\nloss = {}\njitter = \"{}us\"\n",
            w[0], w[1], s.rate_mbps, s.delay_us, s.buffer_pkt, queue, s.loss, s.jitter_us
        );
    }
    let transport = format!(
        "[flow.transport]\necn = {}\nsack = {}\ndelayed_ack = {}\n",
        s.ecn,
        s.sack,
        if s.delayed_ack { "\"40ms\"" } else { "false" }
    );
    for (k, &(kind, size, start_ms)) in s.flows.iter().enumerate() {
        let (src, dst) = if k % 2 == 0 { ("a", "b") } else { ("b", "a") };
        match kind {
            0 => t += &format!("[[flow]]\nname = \"bulk{k}\"\nsrc = \"{src}\"\ndst = \"{dst}\"\nstart = \"{start_ms}ms\"\n{transport}"),
            1 => t += &format!("[[flow]]\nname = \"sized{k}\"\nsrc = \"{src}\"\ndst = \"{dst}\"\nsize = \"{size}B\"\nstart = \"{start_ms}ms\"\n{transport}"),
            2 => t += &format!("[[flow]]\nname = \"cbr{k}\"\nkind = \"cbr\"\nsrc = \"{src}\"\ndst = \"{dst}\"\nrate = \"{}kbps\"\nstart = \"{start_ms}ms\"\nstop = \"1500ms\"\n", size % 5000 + 1),
            _ => t += &format!("[[transactions]]\nname = \"txn{k}\"\nclient = \"{src}\"\nserver = \"{dst}\"\ncount = 3\nstart = \"{start_ms}ms\"\nstop = \"1800ms\"\nrequest = \"100B\"\nresponse = \"{size}B\"\n"),
        }
    }
    t += "[[arrivals]]\nname = \"mice\"\nsrc = \"a\"\ndst = \"b\"\nmean_interarrival = \"300ms\"\nsize = { dist = \"pareto\", mean = \"20KB\", shape = 1.5 }\n";
    t += "[metrics]\ninterval = \"100ms\"\n";
    t
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_scenarios_keep_invariants_and_are_deterministic(s in spec()) {
        let text = toml(&s);
        let first = run_text(&text, "prop.toml", Format::Toml, None, true, None);
        let (_, a) = match first {
            Ok(x) => x,
            Err(e) => return Err(TestCaseError::fail(format!("{e}\n{text}"))),
        };
        let (_, b) = run_text(&text, "prop.toml", Format::Toml, None, true, None).unwrap();
        prop_assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
        prop_assert_eq!(format!("{:?}", a.links), format!("{:?}", b.links));
        prop_assert_eq!(a.stats.events, b.stats.events);
        let sizes = a.flows.i64("size_bytes");
        let delivered = a.flows.i64("bytes_delivered");
        for (size, got) in sizes.iter().zip(delivered) {
            if *size >= 0 {
                prop_assert!(got <= size, "delivered {} of {}", got, size);
            }
        }
        for (q, max) in a.links.f64("mean_queue_bytes").iter().zip(a.links.i64("max_queue_bytes")) {
            prop_assert!(*q >= 0.0 && *q <= *max as f64 + 1e-6);
        }
    }
}
