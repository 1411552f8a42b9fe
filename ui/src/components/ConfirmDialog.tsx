import { useEffect, useId, useRef, type ReactNode } from "react";
import { ErrorMessage } from "./ErrorMessage";
import { PendingButton } from "./PendingButton";

export interface ConfirmDialogProps {
  open: boolean;
  title: string;
  children?: ReactNode;
  confirmLabel: string;
  /** Shown on the confirm button while `pending`. */
  pendingLabel?: string;
  /** A destructive action's button is red. */
  danger?: boolean;
  pending?: boolean;
  /** The failure of the confirmed action, shown inside the dialog so that the user can try again or cancel. */
  error?: unknown;
  onConfirm: () => void;
  onCancel: () => void;
}

/**
 * A modal confirmation on the native <dialog>: focus moves into it and is
 * trapped by the browser, Escape cancels, and focus returns to what opened it.
 * Cancel has the initial focus, so Enter never destroys by accident.
 */
export function ConfirmDialog({ open, title, children, confirmLabel, pendingLabel, danger, pending = false, error, onConfirm, onCancel }: ConfirmDialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const bodyId = useId();

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);

  return (
    <dialog
      ref={ref}
      className="confirm-dialog"
      aria-labelledby={titleId}
      aria-describedby={children ? bodyId : undefined}
      onCancel={(event) => {
        event.preventDefault();
        if (!pending) onCancel();
      }}
    >
      <h2 id={titleId}>{title}</h2>
      {children ? <div id={bodyId}>{children}</div> : null}
      {error ? <ErrorMessage error={error} /> : null}
      <div className="dialog-actions">
        <button type="button" autoFocus onClick={onCancel} disabled={pending}>
          Cancel
        </button>
        <PendingButton className={danger ? "danger" : "primary"} pending={pending} pendingText={pendingLabel} onClick={onConfirm}>
          {confirmLabel}
        </PendingButton>
      </div>
    </dialog>
  );
}
