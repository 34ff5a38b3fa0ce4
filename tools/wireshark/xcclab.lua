-- Wireshark / tshark dissector for xcclab's transport segment and congestion shim.
--
--   wireshark -X lua_script:tools/wireshark/xcclab.lua capture.pcap
--   tshark -X lua_script:tools/wireshark/xcclab.lua -r capture.pcap -V
--   (or copy this file to ~/.local/lib/wireshark/plugins/)
--
-- xcclab packets are UDP datagrams to or from port 9870 (crates/xcc-sim/src/capture.rs).
-- The UDP payload is:
--
--   segment (Segment::emit, crates/xcc-core/src/wire/segment.rs), network byte order:
--     kind:u8 flags:u8 ecn_hint:u8 sack_len:u8 seq:u32 ack:u32 payload:u32
--     ts_val:u64 ts_echo:u64, then sack_len blocks of start:u32 end:u32
--   congestion shim (CongestionHeader::emit, crates/xcc-core/src/wire/congestion.rs):
--     proto:u8 len:u8 body[len]
--   payload (usually not captured: xcclab captures headers only)
--
-- Adding a protocol's congestion header: add one entry to CC_BODIES below, keyed by its
-- protocol number (wire::congestion::proto), with its name, its body length and a function
-- that adds its fields to the tree. Nothing else changes.

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
}

local function cc_name(p)
    local e = CC_BODIES[p]
    return e and e.name or ("unknown (" .. p .. ")")
end

function xcc.dissector(buffer, pinfo, tree)
    local n = buffer:len()
    if n < 32 then return 0 end
    pinfo.cols.protocol = "XCC"
    local t = tree:add(xcc, buffer(), "xcclab transport")

    local kind = buffer(0, 1):uint()
    t:add(f.kind, buffer(0, 1))
    local ft = t:add(f.flags, buffer(1, 1))
    ft:add(f.flag_syn, buffer(1, 1))
    ft:add(f.flag_fin, buffer(1, 1))
    ft:add(f.flag_ece, buffer(1, 1))
    ft:add(f.flag_cwr, buffer(1, 1))
    t:add(f.ecn, buffer(2, 1))
    local sack_len = buffer(3, 1):uint()
    t:add(f.sack_len, buffer(3, 1))
    t:add(f.seq, buffer(4, 4))
    t:add(f.ack, buffer(8, 4))
    t:add(f.payload, buffer(12, 4))
    t:add(f.ts_val, buffer(16, 8))
    t:add(f.ts_echo, buffer(24, 8))
    local o = 32
    for i = 1, sack_len do
        if o + 8 > n then break end
        local st = t:add(buffer(o, 8), "SACK block " .. i)
        st:add(f.sack_start, buffer(o, 4))
        st:add(f.sack_end, buffer(o + 4, 4))
        o = o + 8
    end

    local info = (KINDS[kind] or "?")
    if kind == 1 then
        info = info .. " ack=" .. buffer(8, 4):uint()
    else
        info = info .. " seq=" .. buffer(4, 4):uint() .. " len=" .. buffer(12, 4):uint()
    end

    if o + 2 <= n then
        local p = buffer(o, 1):uint()
        local len = buffer(o + 1, 1):uint()
        local ct = t:add(buffer(o, math.min(2 + len, n - o)), "Congestion header: " .. cc_name(p))
        ct:add(f.cc_proto, buffer(o, 1)):append_text(" (" .. cc_name(p) .. ")")
        ct:add(f.cc_len, buffer(o + 1, 1))
        local entry = CC_BODIES[p]
        if len > 0 and o + 2 + len <= n then
            local body = buffer(o + 2, len)
            if entry then
                entry.dissect(body, ct)
            else
                ct:add(f.cc_body, body)
            end
        end
        if entry and entry.len and entry.len ~= len then
            ct:add_expert_info(PI_MALFORMED, PI_ERROR, "body length differs from the protocol's")
        end
        info = info .. " cc=" .. cc_name(p)
        o = o + 2 + len
    end
    pinfo.cols.info = info
    return o
end

DissectorTable.get("udp.port"):add(XCC_UDP_PORT, xcc)
