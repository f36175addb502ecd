-- SPDX-License-Identifier: BSD-3-Clause
--
-- TCP SYN flood to VIP:SL_TCP_PORT: one continuous stream of SYNs, each a
-- new flow for the DUT. Prints, once a second, the SYNs sent and those
-- that came through on the backend side and, with SL_LBSTAT, the flows the
-- load balancer created, its flows_active, its expiry backlog
-- (flows_overdue, snat_ports_overdue) and its refusals; then the steady
-- state (the medians from second SL_STEADY on) and the totals.
--
-- Two sources of tuples:
--
-- * SL_PCAP=FILE, the pcap that Pktgen was started with (-s TX:FILE), as
--   written by synpcap.py: SYNs from client addresses and ports drawn at
--   random, every frame its own tuple. Pktgen 23.03.0 loads every frame
--   of the file into a pool and sends them in order, over and over, so a
--   tuple comes back once per file: a file larger than the DUT's flows
--   live times the rate makes every SYN a new flow, and the DUT's table
--   can be filled to its SNAT limit.
-- * Without SL_PCAP, a range run over SL_SRC_COUNT addresses and
--   SL_FLOWS ports. Pktgen builds a range run's frames once per start,
--   24,576 per transmit queue, and sends that pool over and over (its
--   random-field mode does not apply to them): a tuple comes back every
--   24,576 frames, and is a new flow only when the DUT's flow of its last
--   SYN has gone by then (a syn-timeout of a few milliseconds).
--
-- The script prints how often a tuple comes back at the rate reached and
-- warns when that is sooner than SL_FLOW_LIFE_MS (4 ms unless set).
--
--   SL_PCAP=/tmp/syn.pcap SL_LBSTAT=... \
--   true | pktgen ... -s 0:/tmp/syn.pcap -- ... -f tools/pktgen/syn_flood.lua
pktgen.screen("off")
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local sl = dofile(dir .. "sluice.lua")
local c = sl.cfg
local name = "syn_flood"

c.flows = tonumber(os.getenv("SL_FLOWS") or "") or 24576
local life_ms = tonumber(os.getenv("SL_FLOW_LIFE_MS") or "") or 4
local steady = tonumber(os.getenv("SL_STEADY") or "") or c.seconds / 2
local pcap = os.getenv("SL_PCAP")
if pcap == "" then
	pcap = nil
end

-- Frames in a pcap of 60-byte frames (synpcap.py): a 24-byte file header,
-- then 16 bytes of record header per frame.
local function pcap_frames(path)
	local f = io.open(path, "rb")
	if f == nil then
		sl.fail("SL_PCAP %s cannot be read", path)
	end
	local size = f:seek("end")
	f:close()
	if size <= 24 or (size - 24) % 76 ~= 0 then
		sl.fail("SL_PCAP %s is not a pcap of 60-byte frames (synpcap.py)",
			path)
	end
	return (size - 24) // 76
end

local distinct
sl.setup_ports()
if pcap ~= nil then
	distinct = pcap_frames(pcap)
	sl.header(name, string.format("TCP SYN 64-byte frames from %s, one " ..
		"continuous stream of %d distinct tuples", pcap, distinct))
	-- The pcap's frames carry their own addresses; only the mode is set.
	pktgen.pcap(c.tx, "on")
else
	distinct = sl.distinct_flows()
	sl.header(name, string.format("TCP SYN 64-byte frames, one " ..
		"continuous stream cycling through %d tuples", distinct))
	sl.setup_range("tcp", c.tcp_port, 64)
	sl.cmd("range " .. c.tx .. " tcp flag clr all",
		"range " .. c.tx .. " tcp flag set syn")
end

-- The DUT learns the generator's addresses before the flood.
sl.announce()
sl.set_rate(c.rate)
pktgen.set(c.tx, "count", 0)

-- The drops the DUT counted between two snapshots, summed, and those of
-- one reason.
local function drops(a, b)
	local n = 0
	for k, v in pairs(b) do
		if k:match("^drop%.") then
			n = n + v - (a[k] or 0)
		end
	end
	return n
end

local function delta(a, b, k)
	return (b[k] or 0) - (a[k] or 0)
end

local function gen_counts()
	local s = pktgen.portStats(c.tx .. "," .. c.rx, "port")
	return s[tonumber(c.tx)].opackets, s[tonumber(c.rx)].ipackets
end

local function median(t)
	if #t == 0 then
		return 0
	end
	local s = {}
	for i, v in ipairs(t) do
		s[i] = v
	end
	table.sort(s)
	local m = #s // 2
	if #s % 2 == 1 then
		return s[m + 1]
	end
	return (s[m] + s[m + 1]) / 2
end

-- Seconds of CPU the DUT's worker has had (SL_CPU: a command printing
-- them): on a host whose CPUs others use too, what the worker did per
-- second of CPU it got says more than what it did per second.
local function dut_cpu()
	local cmd = os.getenv("SL_CPU")
	if cmd == nil or cmd == "" then
		return nil
	end
	local p = io.popen(cmd, "r")
	local v = tonumber(p:read("*l") or "")
	p:close()
	return v
end

local lb0 = sl.lb_snapshot()
local cpu0 = dut_cpu()
pktgen.clr()
pktgen.delay(100)
local t0 = sl.now()
pktgen.start(c.tx)
local prev, t_prev = lb0, t0
local g_tx, g_rx = 0, 0
local st = { sent = {}, fwd = {}, created = {}, active = {} }
local next_announce = t0 + 10
while sl.now() - t0 < c.seconds do
	pktgen.delay(1000)
	local t = sl.now()
	local lb = sl.lb_snapshot()
	local tx, rx = gen_counts()
	local dt = t - t_prev
	if dt > 0 then
		local line = string.format("%s: at %5.1f s: sent %.0f/s, " ..
			"port %s received %.0f/s", name, t - t0, (tx - g_tx) / dt,
			c.rx, (rx - g_rx) / dt)
		local steady_now = t - t0 > steady
		if steady_now then
			st.sent[#st.sent + 1] = (tx - g_tx) / dt
			st.fwd[#st.fwd + 1] = (rx - g_rx) / dt
		end
		if lb ~= nil and prev ~= nil then
			local created = delta(prev, lb, "flows_created") / dt
			line = line .. string.format(", flows_created %.0f/s, " ..
				"flows_active %d, flows_overdue %d, " ..
				"snat_ports_overdue %d, snat_ports_full %.0f/s, " ..
				"dropped %.0f/s", created, lb.flows_active or 0,
				lb.flows_overdue or 0, lb.snat_ports_overdue or 0,
				delta(prev, lb, "drop.snat_ports_full") / dt,
				drops(prev, lb) / dt)
			if steady_now then
				st.created[#st.created + 1] = created
				st.active[#st.active + 1] = lb.flows_active or 0
			end
		end
		sl.say("%s", line)
		prev, t_prev, g_tx, g_rx = lb, t, tx, rx
	end
	if t >= next_announce then
		sl.announce(c.rx)
		next_announce = next_announce + 10
	end
end
pktgen.stop(c.tx)
local t1 = sl.now()
local cpu1 = dut_cpu()
local r = sl.totals()
r.secs = t1 - t0
r.lb0, r.lb1 = lb0, sl.lb_snapshot()

sl.report(name, r)
sl.say("%s: steady state (%d s from %.0f s on, medians): sent %.0f/s, " ..
	"port %s received %.0f/s", name, #st.sent, steady, median(st.sent),
	c.rx, median(st.fwd))
if #st.created > 0 then
	sl.say("%s: steady state: flows_created %.0f/s, flows_active %.0f",
		name, median(st.created), median(st.active))
end
local rate = r.tx / math.max(r.secs, 0.01)
local cycle_ms = 1000 * distinct / math.max(rate, 1)
sl.say("%s: %d distinct tuples come back every %.1f ms at this rate",
	name, distinct, cycle_ms)
if cycle_ms < life_ms then
	sl.say("%s: warning: a tuple comes back before its flow expires " ..
		"(%.1f ms < %d ms): some SYNs met their tuple's last flow and " ..
		"were not new flows; lower SL_RATE or send more tuples",
		name, cycle_ms, life_ms)
end
sl.lb_report(name, r)
if cpu0 ~= nil and cpu1 ~= nil then
	local cpu = cpu1 - cpu0
	sl.say("%s: dut worker cpu %.2f s of %.2f s (%.0f%%)", name, cpu,
		r.secs, 100 * cpu / math.max(r.secs, 0.01))
	if r.lb0 ~= nil and r.lb1 ~= nil and cpu > 0 then
		sl.say("%s: flows_created per second of worker cpu %.0f", name,
			((r.lb1.flows_created or 0) - (r.lb0.flows_created or 0)) /
				cpu)
	end
end
pktgen.quit()
