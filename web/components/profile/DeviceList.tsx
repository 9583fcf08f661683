/**
 * 我的设备 on 我的账户 (issue 29): the devices whose client apps sent a device id with a
 * subscription fetch (model, OS, client, last seen, the address masked), the limit, and 移除
 * after a confirmation, so that a new device gets in under the limit.
 */
import { useCallback, useEffect, useState } from "react";
import {
  DeviceMsg,
  type DeviceList as Devices,
  type ListedDevice,
} from "../../../src/modules/device/schema.ts";
import { call } from "../../api.ts";
import { useConfirm } from "../admin/ConfirmDialog.tsx";
import { toastResult } from "../admin/feedback.ts";
import { formatDateTime } from "../format.ts";

export const DEVICES_EMPTY = "暂无设备：使用支持设备标识的客户端更新订阅后，设备会显示在这里。";

/** "Happ/3.2.1 (iOS)" → "Happ/3.2.1": the client's own name and version. */
export const clientName = (userAgent: string) => userAgent.split(/\s+/)[0] || "未知客户端";

export const deviceName = (device: Pick<ListedDevice, "model" | "platform">) =>
  device.model || device.platform || "未知设备";

export const deviceSystem = (device: Pick<ListedDevice, "platform" | "osVersion">) =>
  [device.platform, device.osVersion].filter(Boolean).join(" ") || "未知系统";

export const limitText = (list: Pick<Devices, "limit">, used: number) =>
  list.limit > 0 ? `已用 ${used} / 上限 ${list.limit} 台` : `已记录 ${used} 台，不限设备数`;

export function DeviceList() {
  const [list, setList] = useState<Devices | null>(null);
  const [confirm, dialog] = useConfirm();

  const load = useCallback(async () => {
    const answer = await call("/api/user/devices", {});
    if (answer.code === 0) setList(answer.data);
  }, []);

  useEffect(() => {
    void load();
  }, [load]);

  async function remove(device: ListedDevice) {
    const confirmed = await confirm({
      title: "移除设备",
      message: `移除「${deviceName(device)}」后，该设备需重新更新订阅才能使用；设备数已满时会被拒绝。`,
      confirmText: "移除",
      danger: true,
    });
    if (!confirmed) return;
    const answer = await call("/api/user/remove_device", { hwid: device.hwid });
    if (toastResult(answer, DeviceMsg.removed, DeviceMsg.removeFailed)) await load();
  }

  return (
    <section className="card profile-card" aria-labelledby="profile-devices">
      <div className="profile-devices-head">
        <h2 id="profile-devices" className="card-title">
          我的设备
        </h2>
        {list ? <span className="badge badge-muted">{limitText(list, list.devices.length)}</span> : null}
      </div>
      {list && list.devices.length === 0 ? <p className="card-note profile-empty">{DEVICES_EMPTY}</p> : null}
      {list && list.devices.length > 0 ? (
        <ul className="profile-permissions" aria-label="设备列表">
          {list.devices.map((device) => (
            <li key={device.hwid} className="profile-permission profile-device">
              <div className="profile-permission-text">
                <span className="profile-permission-name">{deviceName(device)}</span>
                <span className="profile-permission-desc">
                  {deviceSystem(device)} · {clientName(device.userAgent)}
                </span>
                <span className="profile-permission-desc">
                  最近使用 {formatDateTime(device.lastSeen)}
                  {device.lastIp ? ` · ${device.lastIp}` : ""}
                </span>
              </div>
              <button
                type="button"
                className="btn btn-small admin-danger-text"
                aria-label={`移除 ${deviceName(device)}`}
                onClick={() => void remove(device)}
              >
                移除
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      {dialog}
    </section>
  );
}
