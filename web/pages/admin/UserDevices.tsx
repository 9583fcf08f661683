/**
 * 用户管理 → 设备 (issue 29): a customer's devices with their full last address, 全部移除 after a
 * confirmation, and the customer's own device limit (blank: the packages' limit; 0: unlimited).
 */
import { useCallback, useEffect, useState } from "react";
import {
  type DeviceList,
  DeviceMsg,
  deviceLimitValue,
  type ListedDevice,
  MAX_DEVICES,
} from "../../../src/modules/device/schema.ts";
import type { AdminUser } from "../../../src/modules/user/admin-schema.ts";
import { call } from "../../api.ts";
import { LoadingSpinner } from "../../components/admin/AdminPage.tsx";
import { useConfirmedCall } from "../../components/admin/ConfirmDialog.tsx";
import { toastFailure, toastResult } from "../../components/admin/feedback.ts";
import { NumberField, numberFrom } from "../../components/admin/numbers.tsx";
import { Dialog } from "../../components/Dialog.tsx";
import { formatDateTime } from "../../components/format.ts";
import { clientName, deviceName, deviceSystem, limitText } from "../../components/profile/DeviceList.tsx";
import { type Column, Table } from "../../components/Table.tsx";

const COLUMNS: Column<ListedDevice>[] = [
  { key: "model", title: "设备", render: (d) => deviceName(d) },
  { key: "system", title: "系统", render: (d) => deviceSystem(d) },
  { key: "client", title: "客户端", render: (d) => clientName(d.userAgent) },
  { key: "first", title: "首次使用", render: (d) => formatDateTime(d.firstSeen) },
  { key: "last", title: "最近使用", render: (d) => formatDateTime(d.lastSeen) },
  { key: "ip", title: "最近 IP", render: (d) => d.lastIp || "-" },
];

export function UserDevicesDialog({ user, onClose }: { user: AdminUser; onClose: () => void }) {
  const [list, setList] = useState<DeviceList | null>(null);
  const [limit, setLimit] = useState("");
  const [limitError, setLimitError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    const answer = await call("/api/admin/users/devices", { uid: user._id });
    if (answer.code !== 0) {
      toastFailure(answer, "读取设备失败");
      onClose();
      return;
    }
    setList(answer.data);
    setLimit(answer.data.override === null ? "" : String(answer.data.override));
  }, [user._id, onClose]);

  useEffect(() => {
    void load();
  }, [load]);

  const { confirmedCall, dialog } = useConfirmedCall(load);

  async function saveLimit() {
    const value = limit.trim() === "" ? null : numberFrom(limit);
    if (value !== null && !deviceLimitValue.safeParse(value).success) {
      setLimitError(DeviceMsg.limitRange);
      return;
    }
    setLimitError(undefined);
    setBusy(true);
    const answer = await call("/api/admin/users/set_device_limit", { uid: user._id, limit: value });
    setBusy(false);
    if (toastResult(answer, DeviceMsg.limitSaved, DeviceMsg.limitFailed)) await load();
  }

  const removeAll = () =>
    confirmedCall(
      {
        title: "全部移除",
        message: `移除 ${user.email} 的全部设备？这些设备需重新更新订阅。`,
        confirmText: "全部移除",
      },
      () => call("/api/admin/users/remove_devices", { uid: user._id }),
      DeviceMsg.removedAll,
      DeviceMsg.removeFailed,
    );

  return (
    <Dialog open onClose={onClose} title={`设备 · ${user.email}`} size="lg">
      {list ? (
        <div className="user-devices">
          <p className="admin-hint">
            {limitText(list, list.devices.length)}。套餐设备数：
            {list.fromPackages > 0 ? `${list.fromPackages} 台` : "不限"}
            {list.override === null ? "（当前按套餐）" : `；单独设置：${list.override || "不限"}`}。
            设备数上限填 0 为不限，留空按套餐，最多 {MAX_DEVICES} 台。
          </p>
          <form
            className="admin-filter"
            noValidate
            onSubmit={(event) => {
              event.preventDefault();
              void saveLimit();
            }}
          >
            <NumberField
              label="设备数上限"
              min={0}
              max={MAX_DEVICES}
              value={limit}
              error={limitError}
              onChange={setLimit}
            />
            <button type="submit" className="btn btn-primary" disabled={busy} aria-busy={busy}>
              保存上限
            </button>
            <button
              type="button"
              className="btn admin-danger-text"
              disabled={list.devices.length === 0}
              onClick={() => void removeAll()}
            >
              全部移除
            </button>
          </form>
          <Table
            columns={COLUMNS}
            rows={list.devices}
            rowKey={(d) => d.hwid}
            caption="设备列表"
            empty="暂无设备"
          />
        </div>
      ) : (
        <LoadingSpinner />
      )}
      {dialog}
    </Dialog>
  );
}
