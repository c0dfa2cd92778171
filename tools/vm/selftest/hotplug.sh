#!/bin/sh
# Asks the host for QMP device_del of loom1 (loom-vm --hotplug --devices 2)
# and waits, at most 30 s, until the guest has let go of it: one loom PCI
# device, one loom render node (loom's remove unregisters it) and one device
# bound to the loom driver left.
LOOM_VENDOR=0x1234 LOOM_DEVICE=0x4c4d

loom_pci() {
	n=0
	for d in /sys/bus/pci/devices/*; do
		# (a device may vanish between the glob and the read)
		[ "$(cat "$d/vendor" 2>/dev/null)" = $LOOM_VENDOR ] &&
			[ "$(cat "$d/device" 2>/dev/null)" = $LOOM_DEVICE ] && n=$((n + 1))
	done
	echo $n
}
loom_render() {
	n=0
	for r in /sys/class/drm/renderD* /sys/class/accel/accel*; do
		[ "$(basename "$(readlink "$r/device/driver" 2>/dev/null)")" = loom ] && n=$((n + 1))
	done
	echo $n
}
loom_bound() {
	n=0
	for b in /sys/bus/pci/drivers/loom/0000:*; do
		[ -e "$b" ] && n=$((n + 1))
	done
	echo $n
}
# hundredths of a second since boot
now() { awk '{ printf "%d\n", $1 * 100 }' /proc/uptime; }

gone() { [ "$(loom_pci)" -eq 1 ] && [ "$(loom_render)" -eq 1 ] && [ "$(loom_bound)" -eq 1 ]; }
state() { echo "$(loom_pci) PCI device(s), $(loom_render) render node(s), $(loom_bound) bound to loom"; }

if [ "$(loom_pci)" -ne 2 ] || [ "$(loom_render)" -ne 2 ] || [ "$(loom_bound)" -ne 2 ]; then
	echo "not ok 1 - want 2 loom devices before the unplug, have $(state)"
	exit 1
fi
echo "# before: $(state): $(ls /dev/dri /dev/accel 2>/dev/null | tr '\n' ' ')"

start=$(now)
# One write, one line: the host reads it off the console.
printf 'loom-vm: qmp: {"execute":"device_del","arguments":{"id":"loom1"}}\n'
deadline=$((start + 3000))
until gone; do
	if [ "$(now)" -ge $deadline ]; then
		echo "not ok 1 - loom1 still there after 30 s: $(state)"
		exit 1
	fi
	sleep 0.1
done
took=$(($(now) - start))
echo "# after $((took / 100)).$(printf %02d $((took % 100))) s: $(state): $(ls /dev/dri /dev/accel 2>/dev/null | tr '\n' ' ')"
echo "ok 1 - loom1 unplugged"
