-- SPDX-License-Identifier: BSD-3-Clause
--
-- TCP SYN flood to VIP:SL_TCP_PORT: one continuous stream of SYNs at the
-- rate asked for, each a new flow for the DUT. Prints the SYN rate sent,
-- the SYNs forwarded to the backend side and, with SL_LBSTAT, the flows
-- the load balancer created in each second of the run and over the whole:
-- its new-flow rate, second by second, so that a table filling up or
-- expiry falling behind shows as a change over time.
--
-- Pktgen 23.03.0 builds a range run's frames once per start, one pool of
-- 24576 per transmit queue, and then sends that pool over and over (its
-- random-field mode does not apply, and would break the checksums the DUT
-- verifies). One start therefore sends a stream that cycles through the
-- pool's distinct tuples: a tuple comes back once per cycle, and is a new
-- flow when the DUT's flow of its last SYN has expired by then. The
-- flood's service in bench.conf has syn-timeout 2ms, so such a flow lives
-- about 3 ms (timeouts are rounded up to ticks of about 1 ms); the script
-- prints the cycle at the rate it reached and warns when the cycle is
-- shorter than SL_FLOW_LIFE_MS (4 ms unless set), that is above about
-- 6 M SYNs/s from one transmit queue. Restarting the port for new tuples
-- instead (as this script once did) costs about 160 ms per start and caps
-- the stream near 150 K SYNs/s, far below what the DUT takes.
--
--   SL_FLOWS=24576 SL_SRC=10.20.0.1 SL_SRC_COUNT=251 \
--   true | pktgen ... -f tools/pktgen/syn_flood.lua
pktgen.screen("off")
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local sl = dofile(dir .. "sluice.lua")
local c = sl.cfg
local name = "syn_flood"

c.flows = tonumber(os.getenv("SL_FLOWS") or "") or 24576
local life_ms = tonumber(os.getenv("SL_FLOW_LIFE_MS") or "") or 4
local distinct = sl.distinct_flows()
sl.header(name, string.format("TCP SYN 64-byte frames, one continuous " ..
	"stream cycling through %d tuples", distinct))
sl.setup_ports()
sl.setup_range("tcp", c.tcp_port, 64)
sl.cmd("range " .. c.tx .. " tcp flag clr all",
	"range " .. c.tx .. " tcp flag set syn")

-- The DUT learns the generator's addresses before the flood.
sl.announce()
sl.set_rate(c.rate)
pktgen.set(c.tx, "count", 0)

-- The drops the DUT counted between two snapshots, summed.
local function drops(a, b)
	local n = 0
	for k, v in pairs(b) do
		if k:match("^drop%.") then
			n = n + v - (a[k] or 0)
		end
	end
	return n
end

local lb0 = sl.lb_snapshot()
pktgen.clr()
pktgen.delay(100)
local t0 = sl.now()
pktgen.start(c.tx)
local prev, t_prev = lb0, t0
local next_announce = t0 + 10
while sl.now() - t0 < c.seconds do
	pktgen.delay(1000)
	local lb, t = sl.lb_snapshot(), sl.now()
	if lb ~= nil and prev ~= nil and t > t_prev then
		sl.say("%s: at %5.1f s: flows_created %.0f/s, flows_active %d, " ..
			"dropped %.0f/s", name, t - t0,
			((lb.flows_created or 0) - (prev.flows_created or 0)) /
				(t - t_prev),
			lb.flows_active or 0, drops(prev, lb) / (t - t_prev))
		prev, t_prev = lb, t
	end
	if t >= next_announce then
		sl.announce(c.rx)
		next_announce = next_announce + 10
	end
end
pktgen.stop(c.tx)
local t1 = sl.now()
local r = sl.totals()
r.secs = t1 - t0
r.lb0, r.lb1 = lb0, sl.lb_snapshot()

sl.report(name, r)
local rate = r.tx / math.max(r.secs, 0.01)
local cycle_ms = 1000 * distinct / math.max(rate, 1)
sl.say("%s: one start; %d tuples come back every %.1f ms at this rate",
	name, distinct, cycle_ms)
if cycle_ms < life_ms then
	sl.say("%s: warning: a tuple comes back before its flow expires " ..
		"(%.1f ms < %d ms): some SYNs met their tuple's last flow and " ..
		"were not new flows; lower SL_RATE",
		name, cycle_ms, life_ms)
end
sl.lb_report(name, r)
pktgen.quit()
