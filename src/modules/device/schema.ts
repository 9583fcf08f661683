/**
 * Devices (issue 29): the device ids client apps send with each subscription fetch (the HWID
 * contract of Happ, adopted by Remnawave, PasarGuard and 3x-ui), the device limit and the calls of
 * 我的账户 and 用户管理. Shared by the server, the CLI and the SPA.
 */
import { z } from "zod";
import { recordId } from "../../lib/id-schema.ts";

/** Known devices kept per account; a limit above it counts as this many. */
export const MAX_DEVICES = 64;
/** New device ids one account may add per hour (a flood of random ids from one link). */
export const NEW_DEVICES_PER_HOUR = 20;
/** The longest device id taken; a longer one is not an id (refused like a missing one). */
export const MAX_HWID_LENGTH = 128;
/** Longest stored platform, OS version and model; longer values are cut. */
export const MAX_DEVICE_FIELD = 64;
export const MAX_USER_AGENT = 256;

/** The clients that send a device id (ISSUE 29; subscription-formats.md §7). */
export const HWID_CLIENTS =
  "Happ、v2RayTun、FlClashX、Koala Clash、Throne（Shadowrocket、Karing 可在设置中开启）";

export const DeviceMsg = {
  maxReached: "设备数量已达上限，请在「我的账户」中移除旧设备",
  notSupported: `当前客户端未发送设备标识，请使用 ${HWID_CLIENTS}`,
  removed: "设备已移除",
  removeFailed: "移除失败",
  removedAll: "已移除全部设备",
  notFound: "设备不存在",
  limitSaved: "设备数上限已保存",
  limitFailed: "设备数上限保存失败",
  limitRange: `设备数上限须为 0 到 ${MAX_DEVICES} 的整数（0 为不限）`,
} as const;

/** A device as the customer, the back office and `ferry user devices --json` see it. */
export interface Device {
  hwid: string;
  /** x-device-os, e.g. "iOS", "Android", "Windows". */
  platform: string;
  osVersion: string;
  model: string;
  userAgent: string;
  firstSeen: number;
  lastSeen: number;
}

/** A device in a list: with its last address, masked in the customer's own list. */
export interface ListedDevice extends Device {
  lastIp: string;
}

/** A customer's limit: where it comes from and what is in force (0 = unlimited). */
export interface DeviceLimit {
  /** In force: the override when set, else the packages'; at most MAX_DEVICES. */
  limit: number;
  /** The per-customer override (用户管理, `ferry user set-devices`); null = from packages. */
  override: number | null;
  /** The largest deviceNum among the packages the customer holds. */
  fromPackages: number;
}

export interface DeviceList extends DeviceLimit {
  devices: ListedDevice[];
}

/**
 * What the subscription gate needs per account, cached until the next write (ctx.cache.devices):
 * the limit in force and when each known device was last written.
 */
export interface DeviceState {
  limit: number;
  /** The decision for a known device, made once per state (device/service.ts `Admission`). */
  admitted: { kind: "off" } | { kind: "active"; limit: number };
  lastSeen: ReadonlyMap<string, number>;
}

export const hwidInput = z.string().trim().min(1).max(MAX_HWID_LENGTH);

export const removeOwnDeviceInput = z.object({ hwid: hwidInput });

export const adminDevicesInput = z.object({ uid: recordId() });

export const adminRemoveDevicesInput = z.object({ uid: recordId(), hwid: hwidInput.optional() });

export const deviceLimitValue = z
  .number(DeviceMsg.limitRange)
  .int(DeviceMsg.limitRange)
  .min(0, DeviceMsg.limitRange)
  .max(MAX_DEVICES, DeviceMsg.limitRange);

/** `limit: null` goes back to the packages' limit. */
export const setDeviceLimitInput = z.object({ uid: recordId(), limit: deviceLimitValue.nullable() });
export type SetDeviceLimitInput = z.input<typeof setDeviceLimitInput>;
