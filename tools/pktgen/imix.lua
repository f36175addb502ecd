-- SPDX-License-Identifier: BSD-3-Clause
--
-- IMIX: the simple 7:4:1 mix of 64, 594 and 1518-byte frames (40, 576 and
-- 1500-byte IP packets), UDP to VIP:SL_UDP_PORT, as a sequence of 12
-- frames, each from its own client port (SL_SPORT..SL_SPORT+11). Pktgen's
-- rate percentage counts the mix's average frame (361.8 bytes), so
-- SL_RATE=100 is the link's line rate.
--
--   true | pktgen ... -f tools/pktgen/imix.lua
pktgen.screen("off")
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local sl = dofile(dir .. "sluice.lua")
local c = sl.cfg
local name = "imix"

local mix = { 64, 594, 64, 64, 594, 64, 1518, 64, 594, 64, 64, 594 }
c.flows = #mix
sl.header(name, "simple IMIX 7 x 64, 4 x 594, 1 x 1518 bytes, 12 flows")
sl.setup_ports()
local mac = pktgen.pktStats(c.tx)[tonumber(c.tx)].mac_addr
for i, size in ipairs(mix) do
	pktgen.seqTable(i - 1, c.tx, {
		eth_dst_addr = c.dut_mac,
		eth_src_addr = mac,
		ip_dst_addr = c.vip,
		ip_src_addr = c.src .. "/" .. (c.gen_ip:match("/(%d+)$") or "24"),
		sport = c.sport + i - 1,
		dport = c.udp_port,
		ethType = "ipv4",
		ipProto = "udp",
		vlanid = 1,
		pktSize = size,
		gtpu_teid = 0,
		cos = 0,
		tos = 0,
	})
end
pktgen.set(c.tx, "seq_cnt", #mix)
sl.warmup(c.rate)
local r = sl.run(c.seconds)
sl.report(name, r)
local sizes = pktgen.portSizes(c.rx)[tonumber(c.rx)]
sl.say("%s: received by size: 64 %d, 512-1023 %d, 1024-1518 %d", name,
	sizes._64 or 0, sizes._512_1023 or 0, sizes._1024_1518 or 0)
sl.lb_report(name, r)
pktgen.quit()
