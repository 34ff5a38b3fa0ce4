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
-- The congestion headers' table (CC_HEADERS: protocol number, name, body length, fields) is
-- generated from the Rust registry (each header's `impl HeaderBody` in crates/xcc-core/src/wire/)
-- by `python -m xcclab.generated`; the fields and their dissection below are built from it, so
-- a new header needs nothing written here by hand. Tests fail if the table is stale.

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
-- BEGIN GENERATED: python -m xcclab.generated (xcc_core::wire's header registry); do not edit
local CC_HEADERS = {
    [42] = { name = "maxnet", len = 6, fields = {
        { name = "echo", label = "MaxNet echo", offset = 0, kind = "flagged_fixed24", width = 3, frac_bits = 18, flag = "maxstart", flag_label = "MaxStart value" },
        { name = "price", label = "MaxNet price", offset = 3, kind = "flagged_fixed24", width = 3, frac_bits = 18, flag = "maxstart", flag_label = "MaxStart value" },
    } },
    [43] = { name = "xcp", len = 16, fields = {
        { name = "rtt_us", label = "XCP RTT (us)", offset = 0, kind = "u32", width = 4 },
        { name = "x", label = "XCP inter-packet time x (s)", offset = 4, kind = "f32", width = 4 },
        { name = "delta_throughput", label = "XCP feedback (bytes/s)", offset = 8, kind = "f32", width = 4 },
        { name = "reverse_feedback", label = "XCP reverse feedback (bytes/s)", offset = 12, kind = "f32", width = 4 },
    } },
    [44] = { name = "rcp", len = 8, fields = {
        { name = "rate", label = "RCP rate (bytes/s)", offset = 0, kind = "f32", width = 4 },
        { name = "rtt_us", label = "RCP RTT (us)", offset = 4, kind = "u32", width = 4 },
    } },
    [45] = { name = "piqi-rcp", len = 8, fields = {
        { name = "rate_bps", label = "PIQI-RCP rate (bit/s)", offset = 0, kind = "f32", width = 4 },
        { name = "rtt_us", label = "PIQI-RCP RTT (us)", offset = 4, kind = "u32", width = 4 },
    } },
    [46] = { name = "jetmax", len = 11, fields = {
        { name = "share_s", label = "JetMax share (s)", offset = 0, kind = "f32", width = 4 },
        { name = "fair_bps", label = "JetMax fair rate (bit/s)", offset = 4, kind = "f32", width = 4 },
        { name = "bottleneck", label = "JetMax bottleneck hop", offset = 8, kind = "u8", width = 1 },
        { name = "hop", label = "JetMax hop", offset = 9, kind = "u8", width = 1 },
        { name = "candidate", label = "JetMax candidate hop", offset = 10, kind = "u8", width = 1 },
    } },
    [47] = { name = "int", len = 18, record = 16, fields = {
        { name = "hops", label = "INT hops stamped", offset = 0, kind = "u8", width = 1 },
        { name = "slots", label = "INT slots reserved", offset = 1, kind = "u8", width = 1 },
        { name = "queue_bytes", label = "Queue (bytes)", offset = 2, kind = "u32", width = 4 },
        { name = "tx_bytes", label = "Transmitted (bytes, mod 2^32)", offset = 6, kind = "u32", width = 4 },
        { name = "timestamp_ns", label = "Timestamp (ns, mod 2^32)", offset = 10, kind = "u32", width = 4 },
        { name = "line_rate_kbps", label = "Line rate (kbit/s)", offset = 14, kind = "u32", width = 4 },
    } },
}
-- END GENERATED

-- Each header's fields as Wireshark fields, `xcclab.<protocol>.<field>` (`-` becomes `_`). A
-- flagged fixed-point word (MaxNet's) also gets `<field>_s`, its value in seconds, and the flag.
for _, h in pairs(CC_HEADERS) do
    local p = h.name:gsub("-", "_")
    h.pf = {}
    for _, d in ipairs(h.fields) do
        local a = "xcclab." .. p .. "." .. d.name
        if d.kind == "u8" then
            h.pf[d.name] = ProtoField.uint8(a, d.label, base.DEC)
        elseif d.kind == "u32" then
            h.pf[d.name] = ProtoField.uint32(a, d.label, base.DEC)
        elseif d.kind == "f32" then
            h.pf[d.name] = ProtoField.float(a, d.label)
        elseif d.kind == "flagged_fixed24" then
            h.pf[d.name] = ProtoField.uint24(a, d.label, base.HEX)
            h.pf[d.name .. "_s"] = ProtoField.double(a .. "_s", d.label .. " (s)")
            h.pf[d.flag] = h.pf[d.flag] or ProtoField.bool("xcclab." .. p .. "." .. d.flag, d.flag_label)
        end
    end
    for k, v in pairs(h.pf) do
        f[p .. "_" .. k] = v
    end
end

-- A body's fields; for a header with a repeated tail record (INT's hops: `record` bytes, the
-- last fields of the table), the record's fields once per record the body's length holds.
local function dissect_body(h, b, t)
    if h.record then
        local fixed = h.len - h.record
        local n = math.floor((b:len() - fixed) / h.record)
        for _, d in ipairs(h.fields) do
            if d.offset < fixed then t:add(h.pf[d.name], b(d.offset, d.width)) end
        end
        for i = 0, n - 1 do
            local at = fixed + i * h.record
            local rt = t:add(b(at, h.record), "Record " .. i)
            for _, d in ipairs(h.fields) do
                if d.offset >= fixed then rt:add(h.pf[d.name], b(at + d.offset - fixed, d.width)) end
            end
        end
        return
    end
    for _, d in ipairs(h.fields) do
        local r = b(d.offset, d.width)
        if d.kind == "flagged_fixed24" then
            local v = r:uint()
            local flagged = v >= 0x800000
            local seconds = (v % 0x800000) / (2 ^ d.frac_bits)
            local item = t:add(h.pf[d.name], r)
            item:add(h.pf[d.flag], r, flagged)
            item:add(h.pf[d.name .. "_s"], r, seconds)
            if flagged then
                item:append_text(string.format(" (%s, %.6f s)", d.flag_label, seconds))
            else
                item:append_text(string.format(" (%.6f s)", seconds))
            end
        else
            t:add(h.pf[d.name], r)
        end
    end
end

-- Whether a body of `len` bytes has the header's length (or, with a repeated record, its
-- fixed part and a whole number of records).
local function body_fits(h, len)
    if h.record then
        return len >= h.len and (len - h.len) % h.record == 0
    end
    return h.len == len
end

local function cc_name(p)
    if p == 0 then return "none" end
    local e = CC_HEADERS[p]
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
    local entry = CC_HEADERS[p]
    if 2 + len > n then
        ct:add_expert_info(PI_MALFORMED, PI_ERROR, "body runs past the datagram")
        return n
    end
    if len > 0 then
        local body = buffer(2, len)
        if entry and body_fits(entry, len) then
            dissect_body(entry, body, ct)
        else
            ct:add(f.cc_body, body)
        end
    end
    if (entry and not body_fits(entry, len)) or (p == 0 and len ~= 0) then
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
