-- SPDX-License-Identifier: BSD-3-Clause
--
-- Shared part of the Pktgen-DPDK scripts of Sluice (docs/benchmarking.md):
-- settings from the environment, port and range setup, one timed
-- measurement, and the load balancer's counters read before and after it.
-- Each script loads it with dofile() from its own directory.
--
-- Written for Pktgen-DPDK 23.03.0 with Lua 5.3.

local M = {}

local function env(name, default)
	local v = os.getenv(name)
	if v == nil or v == "" then
		return default
	end
	return v
end

local function num(name, default)
	local v = env(name, nil)
	if v == nil then
		return default
	end
	local n = tonumber(v)
	if n == nil then
		error(name .. "='" .. v .. "' is not a number")
	end
	return n
end

-- Everything a script can be told, with the addresses of
-- tools/pktgen/bench.conf as defaults.
M.cfg = {
	tx = env("SL_TX_PORT", "0"),       -- client side: sends to the VIP
	rx = env("SL_RX_PORT", "1"),       -- backend side: counts what comes through
	dut_mac = env("SL_DUT_MAC", nil),  -- MAC of the DUT's client-side port
	dut_port = env("SL_DUT_PORT", "0"), -- that port's DPDK port id on the DUT
	gen_ip = env("SL_GEN_IP", "10.11.0.2/24"),    -- tx port's own address
	rx_ip = env("SL_RX_IP", "10.12.0.254/24"),    -- rx port's own address
	dut_rx_ip = env("SL_DUT_RX_IP", "10.12.0.1"), -- DUT's address facing rx
	src = env("SL_SRC", nil),          -- first client address (default: gen_ip)
	src_count = num("SL_SRC_COUNT", 1),
	vip = env("SL_VIP", "10.11.0.100"),
	udp_port = num("SL_UDP_PORT", 9000),
	tcp_port = num("SL_TCP_PORT", 80),
	sport = num("SL_SPORT", 1024),     -- first client port
	flows = num("SL_FLOWS", 10000),    -- client ports per client address
	size = num("SL_SIZE", 64),         -- frame size with the CRC
	rate = num("SL_RATE", 100),        -- percent of the tx port's link speed
	seconds = num("SL_SECONDS", 10),
	warmup = num("SL_WARMUP", 2),      -- seconds at 1% before measuring
	lbstat = env("SL_LBSTAT", nil),    -- command printing /lb/stats lines
}

local c = M.cfg
if c.src == nil then
	c.src = c.gen_ip:match("^[^/]+")
end

-- Frames per transmit queue that Pktgen builds for a range run: the range
-- advances once per buffer of its pool (MAX_MBUFS_PER_PORT in 23.03.0),
-- not once per packet sent, so no run sends more distinct tuples.
M.POOL = 24576

function M.say(fmt, ...)
	print(string.format(fmt, ...))
	io.stdout:flush()
end

function M.fail(fmt, ...)
	M.say("error: " .. fmt, ...)
	pktgen.quit()
	error(string.format(fmt, ...))
end

-- Seconds since boot, to 10 ms (os.time() has whole seconds only).
function M.now()
	local f = io.open("/proc/uptime", "r")
	local t = f and tonumber(f:read("*n")) or os.time()
	if f then
		f:close()
	end
	return t
end

local function ip2n(s)
	local a, b, d, e = s:match("^(%d+)%.(%d+)%.(%d+)%.(%d+)$")
	if a == nil then
		M.fail("'%s' is not an IPv4 address", s)
	end
	return ((tonumber(a) * 256 + tonumber(b)) * 256 + tonumber(d)) * 256 +
		tonumber(e)
end

local function n2ip(n)
	return string.format("%d.%d.%d.%d", (n >> 24) & 255, (n >> 16) & 255,
		(n >> 8) & 255, n & 255)
end

-- Runs Pktgen command-line commands (those Lua has no call for, such as
-- the TCP flags of a range) through a command file.
function M.cmd(...)
	local path = os.tmpname()
	local f = assert(io.open(path, "w"))
	for _, line in ipairs({ ... }) do
		f:write(line, "\n")
	end
	f:close()
	pktgen.run("cmd", path, "")
	os.remove(path)
end

-- Both ports: the tx port's frames go to the DUT's MAC; both ports answer
-- ARP (Pktgen does so only with input processing on), so the DUT can
-- resolve the generator's addresses as next hops. The rx port's own frames
-- (announce()) are broadcast: they need no DUT MAC.
function M.setup_ports()
	if c.dut_mac == nil then
		M.fail("set SL_DUT_MAC to the MAC address of the DUT's port facing" ..
			" port %s", c.tx)
	end
	pktgen.stop("all")
	pktgen.set_ipaddr(c.tx, "src", c.gen_ip)
	pktgen.set_ipaddr(c.tx, "dst", c.vip)
	pktgen.set_mac(c.tx, "dst", c.dut_mac)
	pktgen.set_ipaddr(c.rx, "src", c.rx_ip)
	pktgen.set_ipaddr(c.rx, "dst", c.dut_rx_ip)
	pktgen.set_mac(c.rx, "dst", "ff:ff:ff:ff:ff:ff")
	pktgen.process(c.tx .. "," .. c.rx, "on")
	pktgen.set(c.tx .. "," .. c.rx, "count", 0)
end

-- Tells the DUT where the generator's addresses are: a gratuitous ARP and
-- a ping from each port. Pktgen 23.03.0 queues the ARP replies it makes on
-- a port that is not sending and sends them only with the next frame it
-- sends there; a ping sends at once and takes the queued frames along
-- (23.03.0 builds it as a TCP or UDP frame to the port's destination, not
-- as an ICMP echo: the DUT drops it as not_ours).
-- Without this the DUT's neighbour entries for the generator go stale
-- after 30 s and fail when their probes go unanswered.
-- During a measurement only the rx port announces itself (ports: its
-- number), so that every frame the tx port counts is test traffic; the tx
-- port sends all the time then, and its ARP replies go out with it.
function M.announce(ports)
	ports = ports or (c.tx .. "," .. c.rx)
	pktgen.send_arp(ports, "g")
	pktgen.ping4(ports)
	pktgen.delay(10)
end

-- A range run on the tx port: proto ("udp" or "tcp") to VIP:dport from
-- c.src_count client addresses and c.flows client ports, all of one size.
-- The address and the port advance together, one step per frame.
function M.setup_range(proto, dport, size)
	local tx = c.tx
	local first = ip2n(c.src)
	local last = n2ip(first + c.src_count - 1)
	local pmax = c.sport + c.flows - 1

	-- Pktgen 23.03.0 steps a 16-bit port past 65535 to 0 and then back
	-- to the maximum, so a range must end below 65535.
	if c.flows < 1 or pmax > 65534 then
		M.fail("SL_SPORT %d + SL_FLOWS %d must stay within 1..65534",
			c.sport, c.flows)
	end
	pktgen.set(tx, "size", size)
	pktgen.set_proto(tx, proto)
	pktgen.range.ip_proto(tx, proto)
	pktgen.range.dst_mac(tx, "start", c.dut_mac)
	pktgen.range.src_ip(tx, "start", c.src)
	pktgen.range.src_ip(tx, "min", c.src)
	pktgen.range.src_ip(tx, "max", last)
	pktgen.range.src_ip(tx, "inc", c.src_count > 1 and "0.0.0.1" or "0.0.0.0")
	pktgen.range.dst_ip(tx, "start", c.vip)
	pktgen.range.dst_ip(tx, "min", c.vip)
	pktgen.range.dst_ip(tx, "max", c.vip)
	pktgen.range.dst_ip(tx, "inc", "0.0.0.0")
	pktgen.range.src_port(tx, "start", c.sport)
	pktgen.range.src_port(tx, "min", c.sport)
	pktgen.range.src_port(tx, "max", pmax)
	pktgen.range.src_port(tx, "inc", 1)
	pktgen.range.dst_port(tx, "start", dport)
	pktgen.range.dst_port(tx, "min", dport)
	pktgen.range.dst_port(tx, "max", dport)
	pktgen.range.dst_port(tx, "inc", 0)
	pktgen.range.pkt_size(tx, "start", size)
	pktgen.range.pkt_size(tx, "min", size)
	pktgen.range.pkt_size(tx, "max", size)
	pktgen.range.pkt_size(tx, "inc", 0)
	pktgen.set_range(tx, "on")
end

-- Distinct (address, port) pairs one range run sends.
function M.distinct_flows()
	local n, a, p = 0, c.src_count, c.flows
	-- Both advance by one per frame: the pairs repeat after lcm(a, p).
	local function gcd(x, y)
		while y ~= 0 do
			x, y = y, x % y
		end
		return x
	end
	n = a // gcd(a, p) * p
	return math.min(n, M.POOL)
end

function M.set_rate(pct)
	pktgen.set(c.tx, "rate", pct)
end

-- /lb/stats as a table, from SL_LBSTAT (a command that prints the lines of
-- tools/pktgen/lbstat.py snapshot); nil when SL_LBSTAT is not set.
function M.lb_snapshot()
	if c.lbstat == nil then
		return nil
	end
	local p = io.popen(c.lbstat, "r")
	local t = {}
	for line in p:lines() do
		local k, v = line:match("^(%S+)%s+(%S+)$")
		if k ~= nil and tonumber(v) ~= nil then
			t[k] = tonumber(v)
		end
	end
	p:close()
	if next(t) == nil then
		M.say("warning: SL_LBSTAT '%s' printed no counters", c.lbstat)
		return nil
	end
	return t
end

-- The load balancer's counters that moved between two snapshots, as rates
-- over the measured seconds.
function M.lb_report(name, r)
	local a, b, secs = r.lb0, r.lb1, r.secs
	if a == nil or b == nil then
		return
	end
	local function d(k)
		return (b[k] or 0) - (a[k] or 0)
	end
	M.say("%s: lb rx %d (%.0f pps) tx %d (%.0f pps) flows_created %d " ..
		"(%.0f/s) flows_active %d", name, d("rx"), d("rx") / secs, d("tx"),
		d("tx") / secs, d("flows_created"), d("flows_created") / secs,
		b["flows_active"] or 0)
	local keys = {}
	for k in pairs(b) do
		local nic = k:match("^port%d+%.(%a[%a_]*)$")
		if (k:match("^drop%.") or k:match("^malformed%.") or
				k == "flows_refused" or k == "rst_sent" or
				k == "syn_retries" or k == "redirect_out" or
				k == "arp_requests" or nic == "imissed" or
				nic == "ierrors" or nic == "oerrors" or
				nic == "rx_nombuf") and d(k) ~= 0 then
			keys[#keys + 1] = k
		end
	end
	table.sort(keys)
	for _, k in ipairs(keys) do
		M.say("%s: lb %s %d", name, k, d(k))
	end
	-- RSS: the share of the client-side port's packets each worker got.
	local p = c.dut_port or "0"
	local nq = b.workers or 1
	if nq > 1 and d("port" .. p .. ".ipackets") > 0 then
		local parts = {}
		for q = 0, nq - 1 do
			parts[#parts + 1] = string.format("q%d %.1f%%", q,
				100 * d("port" .. p .. ".q" .. q .. ".ipackets") /
				d("port" .. p .. ".ipackets"))
		end
		M.say("%s: lb port %s rx per worker queue: %s", name, p,
			table.concat(parts, ", "))
	end
end

-- Port totals after traffic stopped: Pktgen refreshes them once a second,
-- so wait for a refresh that includes the last frames.
function M.totals()
	pktgen.delay(1500)
	local s = pktgen.portStats(c.tx .. "," .. c.rx, "port")
	local p = pktgen.pktStats(c.rx)
	local t, r = s[tonumber(c.tx)], s[tonumber(c.rx)]
	local arp = p[tonumber(c.rx)].arp_pkts
	-- The DUT's ARP requests to the rx port are not forwarded traffic.
	return {
		tx = t.opackets, tx_bytes = t.obytes, tx_err = t.oerrors,
		rx = r.ipackets - arp, rx_bytes = r.ibytes - 60 * arp, rx_arp = arp,
		rx_missed = r.imissed, rx_nombuf = r.rx_nombuf,
		back = t.ipackets,
	}
end

-- Sends at 1% for c.warmup seconds so that the DUT resolves its next hops
-- and, for a fixed set of flows, creates them before the measurement.
function M.warmup(pct)
	if c.warmup <= 0 then
		return
	end
	M.announce()
	M.set_rate(1)
	pktgen.start(c.tx)
	pktgen.delay(c.warmup * 1000)
	pktgen.stop(c.tx)
	pktgen.delay(500)
	M.set_rate(pct)
end

-- Waits secs seconds, announcing the generator every 10 s.
function M.wait(secs)
	local ms = math.floor(secs * 1000)
	while ms > 0 do
		local step = math.min(ms, 10000)
		pktgen.delay(step)
		ms = ms - step
		if ms > 0 then
			M.announce(c.rx)
		end
	end
end

-- One measurement: clears the counters, sends for secs seconds, and returns
-- the totals with the wall time the port was sending, and the load
-- balancer's counters before and after (lb0, lb1) when SL_LBSTAT is set.
function M.run(secs)
	M.announce()
	local lb0 = M.lb_snapshot()
	pktgen.clr()
	pktgen.delay(100)
	local t0 = M.now()
	pktgen.start(c.tx)
	M.wait(secs)
	pktgen.stop(c.tx)
	local t1 = M.now()
	local r = M.totals()
	r.secs = t1 - t0
	r.lb0, r.lb1 = lb0, M.lb_snapshot()
	return r
end

-- Prints one measurement: what was sent, what came through, the loss.
function M.report(name, r)
	local secs = r.secs > 0 and r.secs or 1
	local loss = r.tx > 0 and 100 * (r.tx - r.rx) / r.tx or 0
	M.say("%s: sent %d pkts in %.2f s = %.0f pps (%.1f Mb/s), received %d " ..
		"pkts = %.0f pps (%.1f Mb/s), loss %.3f%%", name, r.tx, secs,
		r.tx / secs, r.tx_bytes * 8 / secs / 1e6, r.rx, r.rx / secs,
		r.rx_bytes * 8 / secs / 1e6, loss)
	if r.tx_err ~= 0 or r.rx_missed ~= 0 or r.rx_nombuf ~= 0 then
		M.say("%s: generator tx errors %d, rx missed %d, rx no mbuf %d " ..
			"(the generator itself lost frames)", name, r.tx_err,
			r.rx_missed, r.rx_nombuf)
	end
	if r.back ~= 0 then
		M.say("%s: %d frames came back on port %s (ARP requests, RSTs, " ..
			"ICMP errors)", name, r.back, c.tx)
	end
end

function M.header(name, what)
	M.say("%s: %s, %s", name, pktgen.info.Pktgen_Version, what)
	M.say("%s: port %s -> DUT %s, VIP %s, clients %s x %d, ports %d..%d, " ..
		"rate %s%%, %s s", name, c.tx, c.dut_mac or "?", c.vip, c.src,
		c.src_count, c.sport, c.sport + c.flows - 1, c.rate, c.seconds)
end

return M
