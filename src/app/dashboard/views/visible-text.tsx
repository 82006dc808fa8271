// Stored text shown with its invisible characters escaped: a routing key written before SEMANTICS §3
// refused them may hold a right-to-left override, which would make it read as another address.
import { codePointName, splitInvisible } from '../../../core/invisible-characters';

export function VisibleText({ text }: { text: string }) {
  const parts = splitInvisible(text);
  if (parts.every((p) => !p.invisible)) return <>{text}</>;
  return (
    <>
      {parts.map((p, i) =>
        p.invisible ? (
          <span key={i} class="escaped" title="An invisible character, shown by its code point">
            {`[${codePointName(p.text)}]`}
          </span>
        ) : (
          p.text
        ),
      )}
    </>
  );
}
