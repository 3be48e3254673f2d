// SPDX-License-Identifier: GPL-2.0
/*
 * tiltd_swtrig: a software IIO trigger for scripts/kernel-test.
 *
 * Debian's kernel has no iio-trig-sysfs or iio-trig-hrtimer, and a chip emulated by i2c-stub has
 * no interrupt line, so no driver gets a data-ready trigger. This module registers one IIO
 * trigger named by the "name" parameter (e.g. "bmi160-dev0", the name a driver gives its own
 * data-ready trigger, or any other) and fires it each time user space writes to its "fire"
 * attribute (/sys/bus/iio/devices/triggerN/fire). The poll runs from an irq_work, i.e. in hard
 * interrupt context as a wired interrupt's would: the driver's top half stamps the scan with the
 * device's current_timestamp_clock, the bottom half reads the chip.
 *
 *   insmod tiltd_swtrig.ko name=bmi160-dev0
 *   echo bmi160-dev0 > /sys/bus/iio/devices/iio:device0/trigger/current_trigger
 *   echo 1 > /sys/bus/iio/devices/trigger0/fire
 *
 * Test tooling only; not part of tiltd.
 */
#include <linux/device.h>
#include <linux/irq_work.h>
#include <linux/module.h>
#include <linux/sysfs.h>
#include <linux/iio/iio.h>
#include <linux/iio/trigger.h>

static char *name = "tiltd-swtrig";
module_param(name, charp, 0444);
MODULE_PARM_DESC(name, "the trigger's name");

static struct iio_trigger *swtrig;
static struct irq_work swtrig_work;
static atomic_t swtrig_fired = ATOMIC_INIT(0);

static void swtrig_poll(struct irq_work *work)
{
	iio_trigger_poll(swtrig);
}

static ssize_t fire_store(struct device *dev, struct device_attribute *attr,
			  const char *buf, size_t len)
{
	atomic_inc(&swtrig_fired);
	irq_work_queue(&swtrig_work);
	return len;
}

static ssize_t fired_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&swtrig_fired));
}

static DEVICE_ATTR_WO(fire);
static DEVICE_ATTR_RO(fired);

static struct attribute *swtrig_attrs[] = {
	&dev_attr_fire.attr,
	&dev_attr_fired.attr,
	NULL,
};

static const struct attribute_group swtrig_group = {
	.attrs = swtrig_attrs,
};

static const struct attribute_group *swtrig_groups[] = {
	&swtrig_group,
	NULL,
};

static const struct iio_trigger_ops swtrig_ops = {};

static int __init swtrig_init(void)
{
	int ret;

	swtrig = iio_trigger_alloc(NULL, "%s", name);
	if (!swtrig)
		return -ENOMEM;
	swtrig->ops = &swtrig_ops;
	swtrig->dev.groups = swtrig_groups;
	init_irq_work(&swtrig_work, swtrig_poll);
	ret = iio_trigger_register(swtrig);
	if (ret) {
		iio_trigger_free(swtrig);
		return ret;
	}
	return 0;
}

static void __exit swtrig_exit(void)
{
	iio_trigger_unregister(swtrig);
	irq_work_sync(&swtrig_work);
	iio_trigger_free(swtrig);
}

module_init(swtrig_init);
module_exit(swtrig_exit);

MODULE_DESCRIPTION("Software IIO trigger fired through sysfs, for tiltd's kernel tests");
MODULE_LICENSE("GPL");
