/** Picks a listing's records out of its answer by the list field's name (it varies by endpoint). */
export const listField =
  (field: string) =>
  (body: unknown): unknown[] => {
    const list = (body as Record<string, unknown> | null)?.[field];
    return Array.isArray(list) ? list : [];
  };

/** The largest page each kind of endpoint allows (§8): every stream asks for it. */
export const MAX_PAGE_SIZE = 100;
export const MAX_METRICS_PAGE_SIZE = 2160;
