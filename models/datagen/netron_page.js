// Page-side half of datagen/render.py, installed as a Playwright init script in every Netron page.
//
// Contract: defines `window.__netronOcr.render(args)`, which opens one model in the already running Netron app,
// applies zoom and pan, and returns everything the Python side needs to write ground truth, in ONE round trip.
// All coordinates it returns are CSS pixels relative to the viewport (getBoundingClientRect space); the caller
// multiplies by `dpr` to get screenshot pixels. Edge curves are returned as the raw SVG path `d` plus the path's
// getScreenCTM() matrix [a, b, c, d, e, f] and are sampled outside the browser (faster than getPointAtLength).
//
// It also pins `window.eval`: Netron replaces it with a throwing function at start-up, and Playwright's evaluate
// goes through it.
(() => {
    const pinnedEval = window.eval;
    Object.defineProperty(window, 'eval', { get: () => pinnedEval, set: () => {}, configurable: false });

    const rect = (element) => {
        const r = element.getBoundingClientRect();
        return [r.left, r.top, r.right, r.bottom];
    };

    const text = (element) => (element ? element.textContent : '');

    // Resolves with the promise's value, rejects on a Netron alert (error dialog) or after `ms` milliseconds.
    const guarded = (promise, ms) => new Promise((resolve, reject) => {
        let done = false;
        const finish = (fn, value) => {
            if (!done) {
                done = true;
                clearTimeout(timer);
                clearInterval(poll);
                fn(value);
            }
        };
        const timer = setTimeout(() => finish(reject, new Error(`timeout: model not rendered after ${ms} ms`)), ms);
        const poll = setInterval(() => {
            if (document.body.classList.contains('alert')) {
                const message = document.getElementById('message-text');
                finish(reject, new Error(`netron error: ${message ? message.innerText : 'unknown'}`));
            }
        }, 25);
        promise.then((value) => finish(resolve, value), (error) => finish(reject, error));
    });

    // Rows of a node's argument lists: weights (view.Argument, which carries the ONNX argument in `.value` and a
    // `.context`) and attribute / hidden-tensor rows (plain grapher.Argument).
    const rows = (node) => {
        const result = [];
        for (const block of node.blocks || []) {
            if (!Array.isArray(block._items)) {
                continue;
            }
            for (const item of block._items) {
                if (!item.element || !item.text) {
                    continue;
                }
                const spans = item.text.querySelectorAll('tspan');
                const nameSpan = spans.length > 0 ? spans[0] : null;
                const valueSpan = spans.length > 1 ? spans[1] : null;
                const isWeight = item.context !== undefined && item.value !== undefined &&
                    typeof item.content === 'string';
                const values = isWeight && Array.isArray(item.value.value) ? item.value.value : [];
                result.push({
                    kind: isWeight ? 'weight' : 'attribute',
                    name: text(nameSpan),
                    value: text(valueSpan),
                    tensor: values.length > 0 && values[0] && typeof values[0].name === 'string' ? values[0].name : '',
                    box: rect(item.text),
                    value_box: valueSpan ? rect(valueSpan) : null,
                });
            }
        }
        return result;
    };

    const kindOf = (element) => {
        if (element.classList.contains('graph-node')) {
            return 'node';
        }
        if (element.classList.contains('graph-input')) {
            return 'input';
        }
        if (element.querySelector(':scope > g.graph-item-output')) {
            return 'output';
        }
        return null;
    };

    const render = async (args) => {
        const view = window.__view__;
        if (!view || !view._host) {
            throw new Error('netron view not ready');
        }
        const options = view._options;
        options.weights = args.weights;
        options.attributes = args.attributes;
        options.names = args.names;
        options.direction = args.direction;
        const host = view._host;
        const started = performance.now();
        const status = await guarded(host._openModel(host._url(`/data/${args.file}`), args.file, null), args.timeoutMs);
        const openMs = performance.now() - started;
        if (status !== '') {
            throw new Error(`netron open failed: status ${JSON.stringify(status)}`);
        }
        const target = view.target;
        if (!target) {
            throw new Error('netron open failed: no target graph');
        }
        const body = document.body.className.trim();
        if (body !== 'default') {
            throw new Error(`netron page not in default state after open: body class '${body}'`);
        }
        const container = document.getElementById('target');
        const canvas = document.getElementById('canvas');
        // Zoom as Netron's _updateZoom does it, but without its clamp (Netron keeps small graphs at >= 1).
        const zoom = args.zoom;
        target._zoom = zoom;
        canvas.style.width = `${zoom * target._width}px`;
        canvas.style.height = `${zoom * target._height}px`;
        delete target._scrollLeft;
        delete target._scrollTop;
        const maxLeft = Math.max(0, container.scrollWidth - container.clientWidth);
        const maxTop = Math.max(0, container.scrollHeight - container.clientHeight);
        container.scrollLeft = Math.round(args.pan[0] * maxLeft);
        container.scrollTop = Math.round(args.pan[1] * maxTop);
        // Optional (absent for generated scenes): centre the view on the element whose ONNX node / graph-input
        // name is `args.focus`, displaced by `args.focusShift` (fractions of the view size), instead of `pan`.
        // Pan fractions land on empty space in big real graphs; `focus_pan` returns the pan actually used.
        let focusPan = null;
        if (typeof args.focus === 'string') {
            let element = null;
            for (const entry of target.nodes.values()) {
                const node = entry.label;
                if (node && node.element && kindOf(node.element) && node.value && node.value.name === args.focus) {
                    element = node.element;
                    break;
                }
            }
            if (!element) {
                throw new Error(`focus element ${JSON.stringify(args.focus)} not found`);
            }
            const shift = args.focusShift || [0, 0];
            const r = element.getBoundingClientRect();
            const area = container.getBoundingClientRect();
            const x = area.left + container.clientLeft + container.clientWidth * (0.5 + shift[0]);
            const y = area.top + container.clientTop + container.clientHeight * (0.5 + shift[1]);
            const clamp = (v, hi) => Math.round(Math.min(hi, Math.max(0, v)));
            container.scrollLeft = clamp(container.scrollLeft + (r.left + r.right) / 2 - x, maxLeft);
            container.scrollTop = clamp(container.scrollTop + (r.top + r.bottom) / 2 - y, maxTop);
            focusPan = [maxLeft > 0 ? container.scrollLeft / maxLeft : args.pan[0],
                maxTop > 0 ? container.scrollTop / maxTop : args.pan[1]];
        }

        const items = [];
        let order = 0;
        for (const [key, entry] of target.nodes) {
            const node = entry.label;
            if (!node || !node.element) {
                continue;
            }
            const kind = kindOf(node.element);
            if (!kind) {
                continue;
            }
            const first = node.blocks && node.blocks[0];
            const header = first && Array.isArray(first._entries) ? first._entries[0] : null;
            const item = {
                key,
                order: order++,
                kind,
                box: rect(node.element),
                title: header ? text(header.text) : '',
                title_box: header && header.element ? rect(header.element) : null,
            };
            if (kind === 'node') {
                const type = node.value && node.value.type ? node.value.type : {};
                item.op = typeof type.name === 'string' ? type.name : '';
                item.category = typeof type.category === 'string' ? type.category : '';
                item.onnx_name = node.value && typeof node.value.name === 'string' ? node.value.name : '';
                item.rows = rows(node);
            } else {
                item.onnx_name = node.value && typeof node.value.name === 'string' ? node.value.name : '';
            }
            items.push(item);
        }
        const edges = [];
        for (const entry of target.edges.values()) {
            const edge = entry.label;
            if (!edge || !edge.element) {
                continue;
            }
            const m = edge.element.getScreenCTM();
            const value = edge.value && edge.value.value ? edge.value.value : null;
            edges.push({
                from: entry.v,
                to: entry.w,
                name: value && typeof value.name === 'string' ? value.name : '',
                d: edge.element.getAttribute('d') || '',
                ctm: m ? [m.a, m.b, m.c, m.d, m.e, m.f] : null,
                label: edge.labelElement ? text(edge.labelElement) : null,
                label_box: edge.labelElement ? rect(edge.labelElement) : null,
            });
        }
        // Netron's own UI drawn over the graph (menu button, zoom toolbar): graph elements under it are occluded.
        const ui = [];
        for (const element of document.querySelectorAll('.menu-button, #toolbar > *')) {
            const r = element.getBoundingClientRect();
            if (r.width > 0 && r.height > 0 && window.getComputedStyle(element).visibility !== 'hidden' &&
                window.getComputedStyle(element).opacity !== '0') {
                ui.push([r.left, r.top, r.right, r.bottom]);
            }
        }
        const area = container.getBoundingClientRect();
        const left = area.left + container.clientLeft;
        const top = area.top + container.clientTop;
        return {
            dpr: window.devicePixelRatio,
            viewport: [window.innerWidth, window.innerHeight],
            clip: [left, top, left + container.clientWidth, top + container.clientHeight],
            graph_size: [target._width, target._height],
            scroll: [container.scrollLeft, container.scrollTop],
            open_ms: openMs,
            focus_pan: focusPan,
            items,
            edges,
            ui,
        };
    };

    window.__netronOcr = { render };
})();
