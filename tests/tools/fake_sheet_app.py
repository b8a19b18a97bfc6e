#!/usr/bin/python3
"""fake_sheet_app.py - replays, on the AT-SPI bus of the current desktop session, the
accessible tree recorded from a LibreOffice Calc 7.4 window (test_desktop_virt's figures):
a frame holding a spreadsheet document whose table reports 2,147,483,647 children,
1,048,576 rows and 16,384 columns, cells named by their address (A1, B2 ...), plus one
push button. Cells exist only as asked for through the Table / Component interfaces, as in
LibreOffice. An X window (800 x 600 at 0, 0) with _NET_WM_PID and the frame's title stands
for the application's window.

Every call is appended to LOG as one line "PATH INTERFACE MEMBER" (properties as
"PATH org.freedesktop.DBus.Properties Get:INTERFACE.NAME"), so a test can assert what was
asked of the table (tests/test_desktop_recorded.c). Prints "ready PID" once embedded in
the registry and mapped; runs until killed.

One deliberate difference from the recording: cell C5 has no Text interface (GetText fails
on it), so that the walk's assumption that a table's cells are all alike (taken from the two
corner cells) meets a cell that contradicts it.

usage: fake_sheet_app.py LOG"""
import ctypes
import sys

import gi
gi.require_version('Atspi', '2.0')
from gi.repository import Atspi, Gio, GLib  # noqa: E402

LOG = open(sys.argv[1], 'a', buffering=1)
TITLE = 'Recorded Sheet - LibreOffice Calc'
ROOT = '/org/a11y/atspi/accessible/root'
FRAME, DOC, TABLE, BUTTON = ('/org/a11y/atspi/accessible/%d' % i for i in (1, 2, 3, 4))
ROWS, COLS, KIDS = 1048576, 16384, 2147483647
X0, Y0, CW, RH = 98, 188, 82, 17           # the sheet's origin, column width, row height
TW, TH = 650, 380                           # the table's size on screen (window 800 x 600)
VIS = (1 << int(Atspi.StateType.VISIBLE)) | (1 << int(Atspi.StateType.SHOWING)) \
    | (1 << int(Atspi.StateType.ENABLED))

XML = '''<node>
<interface name="org.a11y.atspi.Accessible">
 <method name="GetChildAtIndex"><arg direction="in" type="i"/><arg direction="out" type="(so)"/></method>
 <method name="GetChildren"><arg direction="out" type="a(so)"/></method>
 <method name="GetIndexInParent"><arg direction="out" type="i"/></method>
 <method name="GetRelationSet"><arg direction="out" type="a(ua(so))"/></method>
 <method name="GetRole"><arg direction="out" type="u"/></method>
 <method name="GetState"><arg direction="out" type="au"/></method>
 <method name="GetAttributes"><arg direction="out" type="a{ss}"/></method>
 <method name="GetInterfaces"><arg direction="out" type="as"/></method>
 <property name="Name" type="s" access="read"/>
 <property name="Description" type="s" access="read"/>
 <property name="ChildCount" type="i" access="read"/>
</interface>
<interface name="org.a11y.atspi.Application">
 <property name="Version" type="s" access="read"/>
 <property name="ToolkitName" type="s" access="read"/>
</interface>
<interface name="org.a11y.atspi.Component">
 <method name="GetExtents"><arg direction="in" type="u"/><arg direction="out" type="(iiii)"/></method>
 <method name="GetAccessibleAtPoint"><arg direction="in" type="i"/><arg direction="in" type="i"/>
  <arg direction="in" type="u"/><arg direction="out" type="(so)"/></method>
 <method name="GrabFocus"><arg direction="out" type="b"/></method>
</interface>
<interface name="org.a11y.atspi.Table">
 <property name="NRows" type="i" access="read"/>
 <property name="NColumns" type="i" access="read"/>
 <method name="GetAccessibleAt"><arg direction="in" type="i"/><arg direction="in" type="i"/>
  <arg direction="out" type="(so)"/></method>
 <method name="GetIndexAt"><arg direction="in" type="i"/><arg direction="in" type="i"/>
  <arg direction="out" type="i"/></method>
 <method name="GetRowColumnExtentsAtIndex"><arg direction="in" type="i"/>
  <arg direction="out" type="b"/><arg direction="out" type="i"/><arg direction="out" type="i"/>
  <arg direction="out" type="i"/><arg direction="out" type="i"/><arg direction="out" type="b"/></method>
</interface>
<interface name="org.a11y.atspi.Text">
 <property name="CharacterCount" type="i" access="read"/>
 <method name="GetText"><arg direction="in" type="i"/><arg direction="in" type="i"/>
  <arg direction="out" type="s"/></method>
</interface>
<interface name="org.a11y.atspi.Action">
 <method name="GetActions"><arg direction="out" type="a(sss)"/></method>
 <method name="GetName"><arg direction="in" type="i"/><arg direction="out" type="s"/></method>
</interface>
</node>'''
INFO = Gio.DBusNodeInfo.new_for_xml(XML)
IFACES = {i.name: i for i in INFO.interfaces}

# path -> dict(role, name, kids, ifaces, ext (x, y, w, h) on screen, count, cell (row, col))
OBJ = {
    ROOT: dict(role=int(Atspi.Role.APPLICATION), name='soffice', kids=[FRAME], ifaces=['Accessible', 'Application'], ext=None),
    FRAME: dict(role=int(Atspi.Role.FRAME), name=TITLE, kids=[BUTTON, DOC], ifaces=['Accessible', 'Component'], ext=(0, 0, 800, 600)),
    BUTTON: dict(role=int(Atspi.Role.PUSH_BUTTON), name='Save', kids=[], ifaces=['Accessible', 'Component', 'Action'], ext=(10, 40, 40, 30)),
    DOC: dict(role=int(Atspi.Role.DOCUMENT_SPREADSHEET), name='Recorded Sheet - LibreOffice Spreadsheets', kids=[TABLE], ifaces=['Accessible', 'Component'], ext=(X0, Y0, TW, TH)),
    TABLE: dict(role=int(Atspi.Role.TABLE), name='Sheet Sheet1', kids=None, count=KIDS, ifaces=['Accessible', 'Component', 'Table'], ext=(X0, Y0, TW, TH)),
}
ODD = (4, 2)                                # C5: no Text interface (see above)
PARENT = {FRAME: ROOT, BUTTON: FRAME, DOC: FRAME, TABLE: DOC}
conn = None
bus_name = None


def cell_name(row, col):
    letters = ''
    c = col + 1
    while c > 0:
        c, r = divmod(c - 1, 26)
        letters = chr(ord('A') + r) + letters
    return '%s%d' % (letters, row + 1)


def cell(row, col):
    """The object of cell (row, col), registered on first use."""
    path = '/org/a11y/atspi/accessible/cell/%d_%d' % (row, col)
    if path not in OBJ:
        OBJ[path] = dict(role=int(Atspi.Role.TABLE_CELL), name=cell_name(row, col), kids=[], cell=(row, col),
                         ifaces=['Accessible', 'Component'] + ([] if (row, col) == ODD else ['Text']),
                         ext=(X0 + col * CW, Y0 + row * RH, CW, RH))
        PARENT[path] = TABLE
        register(path)
    return (bus_name, path)


def ref(path):
    return (bus_name, path)


def on_call(connection, sender, path, iface, method, params, inv):
    LOG.write('%s %s %s\n' % (path, iface, method))
    o = OBJ.get(path)
    args = params.unpack()
    if o is None:
        inv.return_dbus_error('org.freedesktop.DBus.Error.UnknownObject', path)
        return
    if method == 'GetChildren':
        if o['kids'] is None:           # LibreOffice would build 2^31 cells here
            inv.return_dbus_error('org.freedesktop.DBus.Error.NoReply', 'enumerated a huge table')
            return
        out = GLib.Variant('(a(so))', ([ref(k) for k in o['kids']],))
    elif method == 'GetChildAtIndex':
        kids = o['kids'] or []
        out = GLib.Variant('((so))', (ref(kids[args[0]]) if 0 <= args[0] < len(kids) else (bus_name, '/org/a11y/atspi/null'),))
    elif method == 'GetIndexInParent':
        if 'cell' in o:
            r, c = o['cell']
            idx = r * COLS + c
            out = GLib.Variant('(i)', (idx if idx < 2 ** 31 else -1,))
        else:
            p = PARENT.get(path)
            out = GLib.Variant('(i)', (OBJ[p]['kids'].index(path) if p else -1,))
    elif method == 'GetRelationSet':
        out = GLib.Variant('(a(ua(so)))', ([],))
    elif method == 'GetRole':
        out = GLib.Variant('(u)', (o['role'],))
    elif method == 'GetState':
        bits = VIS | ((1 << int(Atspi.StateType.ACTIVE)) if path == FRAME else 0)
        out = GLib.Variant('(au)', ([bits & 0xffffffff, bits >> 32],))
    elif method == 'GetAttributes':
        out = GLib.Variant('(a{ss})', ({},))
    elif method == 'GetInterfaces':
        out = GLib.Variant('(as)', (['org.a11y.atspi.' + i for i in o['ifaces']],))
    elif method == 'GetExtents':
        x, y, w, h = o['ext'] or (0, 0, 0, 0)
        if args[0] == 1:                # window coordinates: the window is at 0, 0
            pass
        out = GLib.Variant('((iiii))', ((x, y, w, h),))
    elif method == 'GetAccessibleAtPoint':
        x, y = args[0], args[1]
        if path == TABLE and X0 <= x < X0 + TW and Y0 <= y < Y0 + TH:
            out = GLib.Variant('((so))', (cell((y - Y0) // RH, (x - X0) // CW),))
        else:
            out = GLib.Variant('((so))', ((bus_name, '/org/a11y/atspi/null'),))
    elif method == 'GrabFocus':
        out = GLib.Variant('(b)', (True,))
    elif method == 'GetAccessibleAt':
        r, c = args
        if 0 <= r < ROWS and 0 <= c < COLS:
            out = GLib.Variant('((so))', (cell(r, c),))
        else:
            out = GLib.Variant('((so))', ((bus_name, '/org/a11y/atspi/null'),))
    elif method == 'GetIndexAt':
        idx = args[0] * COLS + args[1]
        out = GLib.Variant('(i)', (idx if idx < 2 ** 31 else -1,))
    elif method == 'GetRowColumnExtentsAtIndex':
        idx = args[0]
        out = GLib.Variant('(biiiib)', (idx >= 0, idx // COLS, idx % COLS, 1, 1, False))
    elif method == 'GetText':
        if 'Text' not in o['ifaces']:
            inv.return_dbus_error('org.freedesktop.DBus.Error.UnknownMethod', 'no Text interface')
            return
        out = GLib.Variant('(s)', ('',))
    elif method == 'GetActions':
        out = GLib.Variant('(a(sss))', ([('', '', '')] if 'Action' in o['ifaces'] else [],))
    elif method == 'GetName':
        out = GLib.Variant('(s)', ('press',))
    else:
        inv.return_dbus_error('org.freedesktop.DBus.Error.UnknownMethod', method)
        return
    inv.return_value(out)


def on_get(connection, sender, path, iface, prop):
    LOG.write('%s org.freedesktop.DBus.Properties Get:%s.%s\n' % (path, iface, prop))
    o = OBJ.get(path, {})
    if prop == 'Name':
        return GLib.Variant('s', o.get('name', ''))
    if prop == 'Description':
        return GLib.Variant('s', '')
    if prop == 'ChildCount':
        return GLib.Variant('i', o['count'] if 'count' in o else len(o.get('kids') or []))
    if prop == 'Version':
        return GLib.Variant('s', '3.24.38')     # as LibreOffice's GTK3 plug-in says
    if prop == 'ToolkitName':
        return GLib.Variant('s', 'GTK')
    if prop == 'NRows':
        return GLib.Variant('i', ROWS)
    if prop == 'NColumns':
        return GLib.Variant('i', COLS)
    if prop == 'CharacterCount':
        return GLib.Variant('i', 0)
    return None


def register(path):
    for name in OBJ[path]['ifaces']:
        conn.register_object(path, IFACES['org.a11y.atspi.' + name], on_call, on_get, None)


def x_window():
    """An X window with the frame's title and our pid (ctypes: no Python X bindings needed)."""
    x = ctypes.cdll.LoadLibrary('libX11.so.6')
    x.XOpenDisplay.restype = ctypes.c_void_p
    x.XDefaultRootWindow.restype = ctypes.c_ulong
    x.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
    x.XCreateSimpleWindow.restype = ctypes.c_ulong
    x.XCreateSimpleWindow.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_int,
                                      ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_ulong, ctypes.c_ulong]
    x.XInternAtom.restype = ctypes.c_ulong
    x.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    x.XChangeProperty.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                                  ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    x.XStoreName.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_char_p]
    x.XMapWindow.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
    x.XFlush.argtypes = [ctypes.c_void_p]
    dpy = x.XOpenDisplay(None)
    if not dpy:
        sys.exit('no X display')
    win = x.XCreateSimpleWindow(dpy, x.XDefaultRootWindow(dpy), 0, 0, 800, 600, 0, 0, 0xffffff)
    pid = ctypes.c_long(__import__('os').getpid())
    x.XChangeProperty(dpy, win, x.XInternAtom(dpy, b'_NET_WM_PID', 0), 6, 32, 0, ctypes.byref(pid), 1)
    x.XStoreName(dpy, win, TITLE.encode())
    x.XMapWindow(dpy, win)
    x.XFlush(dpy)
    return x, dpy


def main():
    global conn, bus_name
    session = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    addr = session.call_sync('org.a11y.Bus', '/org/a11y/bus', 'org.a11y.Bus', 'GetAddress', None,
                             GLib.VariantType('(s)'), 0, 5000, None).unpack()[0]
    conn = Gio.DBusConnection.new_for_address_sync(
        addr, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
    conn.set_exit_on_close(True)    # the session's bus gone: this process goes too
    bus_name = conn.get_unique_name()
    for path in list(OBJ):
        register(path)
    conn.call_sync('org.a11y.atspi.Registry', ROOT, 'org.a11y.atspi.Socket', 'Embed',
                   GLib.Variant('((so))', ((bus_name, ROOT),)), GLib.VariantType('((so))'), 0, 5000, None)
    keep = x_window()               # noqa: F841 (the window lives as long as the process)
    print('ready %d' % __import__('os').getpid(), flush=True)
    GLib.MainLoop().run()


main()
