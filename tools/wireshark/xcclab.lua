-- Wireshark / tshark dissector for xcclab's transport segment and congestion shim.
--
--   wireshark -X lua_script:tools/wireshark/xcclab.lua capture.pcap
--   tshark -X lua_script:tools/wireshark/xcclab.lua -r capture.pcap -V
--   (or copy this file to ~/.local/lib/wireshark/plugins/)
--
-- xcclab packets are UDP datagrams to or from port 9870 (crates/xcc-core/src/wire/datagram.rs,
-- written by the simulator's capture, crates/xcc-build/src/capture.rs, and the emulator). The UDP
-- payload is, in network byte order:
--
--   congestion shim (CongestionHeader::emit, crates/xcc-core/src/wire/congestion.rs), right
--   after the UDP header (seed 002's congestion layer between transport and network):
--     proto:u8 len:u8 body[len]
--   segment (Segment::emit, crates/xcc-core/src/wire/segment.rs):
--     kind:u8 flags:u8 ecn_hint:u8 sack_len:u8 seq:u32 ack:u32 payload:u32
--     ts_val:u64 ts_echo:u64, then sack_len blocks of start:u32 end:u32
--   payload (usually not captured: xcclab captures headers only)
--
-- Adding a protocol's congestion header: add one entry to CC_BODIES below, keyed by its
-- protocol number (wire::congestion::proto), with its name, its body length and a function
-- that adds its fields to the tree. Nothing else changes here. This table is kept by hand (it
-- is not generated from the Rust registry): it is the one place, step 11 of "Adding an
-- algorithm" in docs/architecture.md.

local XCC_UDP_PORT = 9870

local xcc = Proto("xcclab", "xcclab transport")

local KINDS = { [0] = "Data", [1] = "Ack", [2] = "Datagram" }
local ECN = { [0] = "Not-ECT", [1] = "ECT(1)", [2] = "ECT(0)", [3] = "CE" }

local f = xcc.fields
f.kind = ProtoField.uint8("xcclab.kind", "Kind", base.DEC, KINDS)
f.flags = ProtoField.uint8("xcclab.flags", "Flags", base.HEX)
f.flag_syn = ProtoField.bool("xcclab.flags.syn", "SYN", 8, nil, 0x01)
f.flag_fin = ProtoField.bool("xcclab.flags.fin", "FIN", 8, nil, 0x02)
f.flag_ece = ProtoField.bool("xcclab.flags.ece", "ECE (ECN-Echo)", 8, nil, 0x04)
f.flag_cwr = ProtoField.bool("xcclab.flags.cwr", "CWR (window reduced)", 8, nil, 0x08)
f.flag_probe = ProtoField.bool("xcclab.flags.probe", "PROBE (rate probe, no sequence space)", 8, nil, 0x10)
f.ecn = ProtoField.uint8("xcclab.ecn", "ECN hint", base.DEC, ECN, 0x03)
f.sack_len = ProtoField.uint8("xcclab.sack_len", "SACK blocks", base.DEC)
f.seq = ProtoField.uint32("xcclab.seq", "Sequence (segments)", base.DEC)
f.ack = ProtoField.uint32("xcclab.ack", "Cumulative ACK (segments)", base.DEC)
f.payload = ProtoField.uint32("xcclab.payload", "Payload bytes", base.DEC)
f.ts_val = ProtoField.uint64("xcclab.ts_val", "TSval (ns)", base.DEC)
f.ts_echo = ProtoField.uint64("xcclab.ts_echo", "TSecr (ns)", base.DEC)
f.sack_start = ProtoField.uint32("xcclab.sack.start", "SACK start", base.DEC)
f.sack_end = ProtoField.uint32("xcclab.sack.end", "SACK end", base.DEC)
f.cc_proto = ProtoField.uint8("xcclab.cc.proto", "Congestion protocol", base.DEC)
f.cc_len = ProtoField.uint8("xcclab.cc.len", "Congestion body length", base.DEC)
f.cc_body = ProtoField.bytes("xcclab.cc.body", "Congestion body")
-- MaxNet (seed 000 Fig. 4): two 24-bit words; top bit set = MaxStart value; the other 23 bits
-- are a price in seconds with 18 fraction bits (xcc_core::wire::maxnet).
f.maxnet_echo = ProtoField.uint24("xcclab.maxnet.echo", "MaxNet echo", base.HEX)
f.maxnet_price = ProtoField.uint24("xcclab.maxnet.price", "MaxNet price", base.HEX)
f.maxnet_echo_s = ProtoField.double("xcclab.maxnet.echo_s", "Echoed price (s)")
f.maxnet_price_s = ProtoField.double("xcclab.maxnet.price_s", "Price (s)")
f.maxnet_maxstart = ProtoField.bool("xcclab.maxnet.maxstart", "MaxStart value")
-- XCP (xcc_core::wire::xcp): rtt_us:u32 x:f32 delta_throughput:f32 reverse_feedback:f32.
f.xcp_rtt = ProtoField.uint32("xcclab.xcp.rtt_us", "XCP RTT (us)", base.DEC)
f.xcp_x = ProtoField.float("xcclab.xcp.x", "XCP inter-packet time x (s)")
f.xcp_delta = ProtoField.float("xcclab.xcp.delta_throughput", "XCP feedback (bytes/s)")
f.xcp_reverse = ProtoField.float("xcclab.xcp.reverse_feedback", "XCP reverse feedback (bytes/s)")
-- RCP (xcc_core::wire::rcp): rate:f32 in bytes/s (+inf: no request yet), rtt_us:u32.
f.rcp_rate = ProtoField.float("xcclab.rcp.rate", "RCP rate (bytes/s)")
f.rcp_rtt = ProtoField.uint32("xcclab.rcp.rtt_us", "RCP RTT (us)", base.DEC)
-- PIQI-RCP (xcc_core::wire::piqi_rcp): rate:f32 in bit/s, rtt_us:u32.
f.piqi_rate = ProtoField.float("xcclab.piqi_rcp.rate_bps", "PIQI-RCP rate (bit/s)")
f.piqi_rtt = ProtoField.uint32("xcclab.piqi_rcp.rtt_us", "PIQI-RCP RTT (us)", base.DEC)
-- JetMax (xcc_core::wire::jetmax): share_s:f32 fair_bps:f32 bottleneck:u8 hop:u8 candidate:u8.
f.jetmax_share = ProtoField.float("xcclab.jetmax.share_s", "JetMax share (s)")
f.jetmax_fair = ProtoField.float("xcclab.jetmax.fair_bps", "JetMax fair rate (bit/s)")
f.jetmax_bottleneck = ProtoField.uint8("xcclab.jetmax.bottleneck", "JetMax bottleneck hop", base.DEC)
f.jetmax_hop = ProtoField.uint8("xcclab.jetmax.hop", "JetMax hop", base.DEC)
f.jetmax_candidate = ProtoField.uint8("xcclab.jetmax.candidate", "JetMax candidate hop", base.DEC)

local function maxnet_word(b, t, raw_field, seconds_field)
    local v = b:uint()
    local item = t:add(raw_field, b)
    local flagged = v >= 0x800000
    local seconds = (v % 0x800000) / 262144
    item:add(f.maxnet_maxstart, b, flagged)
    item:add(seconds_field, b, seconds)
    item:append_text(string.format(flagged and " (MaxStart, price-equivalent %.6f s)" or " (%.6f s)", seconds))
end

-- Congestion-header bodies, one entry per protocol number. Each entry: name, body length
-- (nil: any), and dissect(buffer_of_body, tree) adding its fields (declared in `f` above).
local CC_BODIES = {
    [0] = { name = "none", len = 0, dissect = function(_, _) end },
    [42] = {
        name = "maxnet",
        len = 6,
        dissect = function(b, t)
            maxnet_word(b(0, 3), t, f.maxnet_echo, f.maxnet_echo_s)
            maxnet_word(b(3, 3), t, f.maxnet_price, f.maxnet_price_s)
        end,
    },
    [43] = {
        name = "xcp",
        len = 16,
        dissect = function(b, t)
            t:add(f.xcp_rtt, b(0, 4))
            t:add(f.xcp_x, b(4, 4))
            t:add(f.xcp_delta, b(8, 4))
            t:add(f.xcp_reverse, b(12, 4))
        end,
    },
    [44] = {
        name = "rcp",
        len = 8,
        dissect = function(b, t)
            t:add(f.rcp_rate, b(0, 4))
            t:add(f.rcp_rtt, b(4, 4))
        end,
    },
    [45] = {
        name = "piqi-rcp",
        len = 8,
        dissect = function(b, t)
            t:add(f.piqi_rate, b(0, 4))
            t:add(f.piqi_rtt, b(4, 4))
        end,
    },
    [46] = {
        name = "jetmax",
        len = 11,
        dissect = function(b, t)
            t:add(f.jetmax_share, b(0, 4))
            t:add(f.jetmax_fair, b(4, 4))
            t:add(f.jetmax_bottleneck, b(8, 1))
            t:add(f.jetmax_hop, b(9, 1))
            t:add(f.jetmax_candidate, b(10, 1))
        end,
    },
}

local function cc_name(p)
    local e = CC_BODIES[p]
    return e and e.name or ("unknown (" .. p .. ")")
end

function xcc.dissector(buffer, pinfo, tree)
    local n = buffer:len()
    if n < 2 then return 0 end
    pinfo.cols.protocol = "XCC"
    local t = tree:add(xcc, buffer(), "xcclab transport")

    -- The congestion shim, right after the UDP header.
    local p = buffer(0, 1):uint()
    local len = buffer(1, 1):uint()
    local ct = t:add(buffer(0, math.min(2 + len, n)), "Congestion header: " .. cc_name(p))
    ct:add(f.cc_proto, buffer(0, 1)):append_text(" (" .. cc_name(p) .. ")")
    ct:add(f.cc_len, buffer(1, 1))
    local entry = CC_BODIES[p]
    if 2 + len > n then
        ct:add_expert_info(PI_MALFORMED, PI_ERROR, "body runs past the datagram")
        return n
    end
    if len > 0 then
        local body = buffer(2, len)
        if entry and entry.len == len then
            entry.dissect(body, ct)
        else
            ct:add(f.cc_body, body)
        end
    end
    if entry and entry.len and entry.len ~= len then
        ct:add_expert_info(PI_MALFORMED, PI_ERROR, "body length differs from the protocol's")
    end

    -- The transport segment behind it.
    local o = 2 + len
    if o + 32 > n then
        t:add_expert_info(PI_MALFORMED, PI_ERROR, "segment truncated")
        pinfo.cols.info = "cc=" .. cc_name(p) .. " (segment truncated)"
        return n
    end
    local s = buffer(o, n - o)
    local kind = s(0, 1):uint()
    t:add(f.kind, s(0, 1))
    local ft = t:add(f.flags, s(1, 1))
    ft:add(f.flag_syn, s(1, 1))
    ft:add(f.flag_fin, s(1, 1))
    ft:add(f.flag_ece, s(1, 1))
    ft:add(f.flag_cwr, s(1, 1))
    ft:add(f.flag_probe, s(1, 1))
    t:add(f.ecn, s(2, 1))
    local sack_len = s(3, 1):uint()
    t:add(f.sack_len, s(3, 1))
    t:add(f.seq, s(4, 4))
    t:add(f.ack, s(8, 4))
    t:add(f.payload, s(12, 4))
    t:add(f.ts_val, s(16, 8))
    t:add(f.ts_echo, s(24, 8))
    local k = 32
    for i = 1, sack_len do
        if o + k + 8 > n then break end
        local st = t:add(s(k, 8), "SACK block " .. i)
        st:add(f.sack_start, s(k, 4))
        st:add(f.sack_end, s(k + 4, 4))
        k = k + 8
    end

    local info = (KINDS[kind] or "?")
    if kind == 1 then
        info = info .. " ack=" .. s(8, 4):uint()
    else
        info = info .. " seq=" .. s(4, 4):uint() .. " len=" .. s(12, 4):uint()
    end
    pinfo.cols.info = info .. " cc=" .. cc_name(p)
    return o + k
end

DissectorTable.get("udp.port"):add(XCC_UDP_PORT, xcc)
