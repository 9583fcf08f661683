import { type ReactNode, useEffect, useRef, useState } from "react";
import { Dialog } from "./Dialog.tsx";

type QrLibrary = typeof import("qrcode");

/**
 * The QR library, its own chunk fetched with the first code drawn (not with every page). It is a
 * CommonJS package: the built chunk exports only `default` (the library), while Bun and bundlers
 * that copy the names give the functions on the namespace itself; take whichever has them.
 */
async function loadQrLibrary(): Promise<QrLibrary> {
  const module = (await import("qrcode")) as QrLibrary & { default?: QrLibrary };
  const library = typeof module.toCanvas === "function" ? module : module.default;
  if (typeof library?.toCanvas !== "function") throw new Error("the QR library chunk has no toCanvas");
  return library;
}

export const QR_SIZE = 200;
/** The canvas is drawn 1 s after opening (seed 000 §2). */
export const QR_DELAY_MS = 1000;

/** A 200×200 QR code canvas drawn 1 s after it appears (or after `value` changes). */
export function QrCanvas({ value, label = "二维码" }: { value: string; label?: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const [drawn, setDrawn] = useState(false);
  const [failed, setFailed] = useState(false);

  useEffect(() => {
    setDrawn(false);
    setFailed(false);
    let cancelled = false;
    const timer = setTimeout(() => {
      const target = canvas.current;
      if (!target || cancelled) return;
      loadQrLibrary()
        .then((qrcode) => qrcode.toCanvas(target, value, { width: QR_SIZE, margin: 1 }))
        .then(() => {
          if (cancelled) return;
          // toCanvas sizes the canvas itself; keep the element at exactly 200x200.
          target.style.width = `${QR_SIZE}px`;
          target.style.height = `${QR_SIZE}px`;
          setDrawn(true);
        })
        .catch(() => !cancelled && setFailed(true));
    }, QR_DELAY_MS);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [value]);

  return (
    <div className="qr-box">
      <canvas ref={canvas} width={QR_SIZE} height={QR_SIZE} className="qr-canvas" aria-label={label} />
      {!drawn && !failed ? <span className="qr-wait">二维码生成中…</span> : null}
      {failed ? <span className="qr-wait">二维码生成失败</span> : null}
    </div>
  );
}

export interface QrDialogProps {
  open: boolean;
  onClose: () => void;
  title: ReactNode;
  description?: ReactNode;
  /** The text encoded in the QR code. */
  value: string;
}

export function QrDialog({ open, onClose, title, description, value }: QrDialogProps) {
  return (
    <Dialog
      open={open}
      onClose={onClose}
      title={title}
      size="sm"
      footer={
        <button type="button" className="btn" onClick={onClose}>
          关闭
        </button>
      }
    >
      {description ? <div className="qr-description">{description}</div> : null}
      <QrCanvas value={value} />
    </Dialog>
  );
}
