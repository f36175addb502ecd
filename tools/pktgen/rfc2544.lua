-- SPDX-License-Identifier: BSD-3-Clause
--
-- Zero-loss throughput in the manner of RFC 2544 (section 26.1): for each
-- frame size, trials of SL_TRIAL seconds at a rate found by binary search
-- between 0 and SL_RATE percent of the link; a trial passes when no more
-- than SL_LOSS_TOL percent of the frames sent are missing on the backend
-- side (0: zero loss). The search stops when the interval is narrower
-- than SL_PRECISION percent. UDP to VIP:SL_UDP_PORT over SL_FLOWS flows.
--
--   SL_SIZES=64,128,256,512,1024,1280,1518 SL_TRIAL=60 \
--   true | pktgen ... -f tools/pktgen/rfc2544.lua
pktgen.screen("off")
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local sl = dofile(dir .. "sluice.lua")
local c = sl.cfg
local name = "rfc2544"

local function numenv(k, d)
	return tonumber(os.getenv(k) or "") or d
end
local trial = numenv("SL_TRIAL", 10)
local tol = numenv("SL_LOSS_TOL", 0)
local prec = numenv("SL_PRECISION", 0.5)
local pause = numenv("SL_PAUSE", 2)
local sizes = {}
for s in (os.getenv("SL_SIZES") or "64,128,256,512,1024,1280,1518"):gmatch("%d+") do
	sizes[#sizes + 1] = tonumber(s)
end

c.flows = numenv("SL_FLOWS", 1024)
c.seconds = trial
sl.header(name, string.format("trials of %g s, loss tolerance %g%%, " ..
	"precision %g%%, sizes %s", trial, tol, prec, table.concat(sizes, ",")))
sl.setup_ports()

local results = {}
for _, size in ipairs(sizes) do
	sl.setup_range("udp", c.udp_port, size)
	sl.warmup(c.rate)

	local function try(rate)
		sl.set_rate(rate)
		local r = sl.run(trial)
		local lost = r.tx - r.rx
		local loss = r.tx > 0 and 100 * lost / r.tx or 100
		local ok = r.tx > 0 and loss <= tol
		sl.say("%s: size %d rate %.2f%%: sent %d (%.0f pps), received %d, " ..
			"lost %d (%.4f%%): %s", name, size, rate, r.tx, r.tx / r.secs,
			r.rx, lost, loss, ok and "pass" or "fail")
		sl.lb_report(string.format("%s: size %d rate %.2f%%", name, size,
			rate), r)
		pktgen.delay(pause * 1000)
		return ok, r
	end

	-- The highest rate that passed is lo; the lowest that failed is hi.
	local lo, hi, best = 0, c.rate, nil
	local ok, r = try(hi)
	if ok then
		lo, best = hi, r
	else
		while hi - lo > prec do
			local mid = (lo + hi) / 2
			ok, r = try(mid)
			if ok then
				lo, best = mid, r
			else
				hi = mid
			end
		end
	end
	local pps = best and best.tx / best.secs or 0
	local mbps = best and best.tx_bytes * 8 / best.secs / 1e6 or 0
	results[#results + 1] = string.format("%s: result size %d: %.2f%% of " ..
		"the link, %.0f pps, %.1f Mb/s (L2 without preamble and CRC)",
		name, size, lo, pps, mbps)
	sl.say("%s", results[#results])
end
sl.say("%s: summary", name)
for _, line in ipairs(results) do
	sl.say("%s", line)
end
pktgen.quit()
