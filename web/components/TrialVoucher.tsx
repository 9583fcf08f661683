/**
 * The header's 体验券 button (seed 000 §2 trial voucher modal): opening needs a login. The modal
 * (TrialVoucherDialog.tsx) is its own chunk, fetched on the first press.
 */
import { lazy, Suspense, useState } from "react";
import { withPageStyles } from "../lib/pageStyles.ts";
import { requireLogin } from "./requireLogin.ts";

// With the page styles: the button is in the header, on pages that may not have loaded them.
const TrialVoucherDialog = lazy(() =>
  withPageStyles(import("./TrialVoucherDialog.tsx")).then((module) => ({
    default: module.TrialVoucherDialog,
  })),
);

/** The button that opens the modal; logged-out visitors are sent to log in instead. */
export function TrialVoucherButton({ className = "btn btn-small" }: { className?: string }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button
        type="button"
        className={`${className} trial-voucher-button`}
        onClick={() => {
          if (requireLogin()) setOpen(true);
        }}
      >
        体验券
      </button>
      {open ? (
        <Suspense fallback={null}>
          <TrialVoucherDialog onClose={() => setOpen(false)} />
        </Suspense>
      ) : null}
    </>
  );
}
