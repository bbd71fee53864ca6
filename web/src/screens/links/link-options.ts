import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api.ts';
import type { Domain, Folder, TagRef } from './link-types.ts';

export interface LinkOptions {
  domains: Domain[];
  tags: TagRef[];
  folders: Folder[];
  loaded: boolean;
  /** Adds a tag or folder made from the editor, so pickers show it without reloading. */
  addTag: (tag: TagRef) => void;
  addFolder: (folder: Folder) => void;
}

/** The workspace's domains, tags and folders for pickers and filters (each a single page in the API). */
export function useLinkOptions(): LinkOptions {
  const [options, setOptions] = useState<Omit<LinkOptions, 'addTag' | 'addFolder'>>({ domains: [], tags: [], folders: [], loaded: false });
  useEffect(() => {
    const list = <T,>(path: string) => api.get<{ data: T[] }>(path).then((page) => page.data, () => [] as T[]);
    void Promise.all([list<Domain>('/v1/domains'), list<TagRef>('/v1/tags'), list<Folder>('/v1/folders')]).then(([domains, tags, folders]) =>
      setOptions({ domains, tags, folders, loaded: true }),
    );
  }, []);
  return {
    ...options,
    addTag: (tag) => setOptions((o) => ({ ...o, tags: [...o.tags, tag] })),
    addFolder: (folder) => setOptions((o) => ({ ...o, folders: [...o.folders, folder] })),
  };
}
