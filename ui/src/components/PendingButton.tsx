import type { ButtonHTMLAttributes, ReactNode } from "react";

export interface PendingButtonProps extends ButtonHTMLAttributes<HTMLButtonElement> {
  /** While true the button is disabled, says `pendingText`, and tells assistive technology it is busy. */
  pending: boolean;
  pendingText?: ReactNode;
}

/** A button for an action that talks to the server: one click, then a visible pending state until it answers. */
export function PendingButton({ pending, pendingText, children, disabled, type = "button", ...rest }: PendingButtonProps) {
  return (
    <button {...rest} type={type} disabled={pending || disabled} aria-busy={pending || undefined}>
      {pending ? (pendingText ?? children) : children}
    </button>
  );
}
