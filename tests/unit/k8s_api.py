#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A small Kubernetes API server for the kubernetes driver's tests.

It speaks the paths and objects the driver uses, as the Kubernetes API
reference records them:
  GET/PATCH /apis/apps/v1/namespaces/NS/deployments/NAME/scale
      (autoscaling/v1 Scale; PATCH with application/merge-patch+json)
  GET /apis/discovery.k8s.io/v1/namespaces/NS/endpointslices
      ?labelSelector=kubernetes.io/service-name=NAME (EndpointSliceList)
  PATCH /api/v1/namespaces/NS/pods/NAME (metadata.annotations)
and simulates the Deployment's ReplicaSet: a higher replica count creates
pods (ready from the next list on), a lower one deletes the pods with the
lowest controller.kubernetes.io/pod-deletion-cost first, then the newest.
Every request needs "Authorization: Bearer TOKEN". Prints its port, then
serves until killed; GET /debug returns the state. POST /debug sets up a
test: {"replicas": N} makes the Deployment have N pods, ready at once (as
if they ran before the driver started), {"fail_lists": N} answers the
next N EndpointSlice lists with HTTP 500, and the request log restarts.
Pods get addresses 10.9.0.1, 10.9.0.2 ... and port 8080, or those of
K8S_POD_ADDRS (addresses separated by spaces, the Nth pod made gets the
Nth) and K8S_POD_PORT from the environment. With IPv6 addresses there
the EndpointSlice's addressType is IPv6, as a cluster's second slice of
a dual-stack Service is.
"""
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlparse

NS, DEPLOY, SERVICE, TOKEN = sys.argv[1:5]
COST = "controller.kubernetes.io/pod-deletion-cost"
ADDRS = os.environ.get("K8S_POD_ADDRS", "").split()
PORT = int(os.environ.get("K8S_POD_PORT", "8080"))
state = {"replicas": 0, "pods": [], "next": 0, "requests": [],
         "fail_lists": 0}


def scale_obj():
    return {"kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {"name": DEPLOY, "namespace": NS},
            "spec": {"replicas": state["replicas"]},
            "status": {"replicas": len(state["pods"])}}


def reconcile():
    pods = state["pods"]
    while len(pods) < state["replicas"]:
        n = state["next"]
        state["next"] += 1
        ip = ADDRS[n] if n < len(ADDRS) else "10.9.0.%d" % (n + 1)
        pods.append({"name": "%s-%d" % (DEPLOY, n), "ip": ip,
                     "ready": False, "annotations": {}})
    while len(pods) > state["replicas"]:
        victim = min(range(len(pods)), key=lambda i: (
            int(pods[i]["annotations"].get(COST, "0")), -i))
        pods.pop(victim)


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def authorized(self):
        if self.headers.get("Authorization") == "Bearer " + TOKEN:
            return True
        self.reply(401, {"kind": "Status", "code": 401,
                         "reason": "Unauthorized"})
        return False

    def do_GET(self):
        u = urlparse(self.path)
        if u.path == "/debug":
            return self.reply(200, state)
        if not self.authorized():
            return
        state["requests"].append("GET " + u.path)
        if u.path == "/apis/apps/v1/namespaces/%s/deployments/%s/scale" % (
                NS, DEPLOY):
            return self.reply(200, scale_obj())
        if u.path == "/apis/discovery.k8s.io/v1/namespaces/%s/endpointslices" % NS:
            if state["fail_lists"] > 0:
                state["fail_lists"] -= 1
                return self.reply(500, {"kind": "Status", "code": 500,
                                        "reason": "InternalError"})
            sel = parse_qs(u.query).get("labelSelector", [""])[0]
            eps = []
            if sel == "kubernetes.io/service-name=" + SERVICE:
                for p in state["pods"]:
                    eps.append({"addresses": [p["ip"]],
                                "conditions": {"ready": p["ready"]},
                                "targetRef": {"kind": "Pod", "name": p["name"],
                                              "namespace": NS}})
                    p["ready"] = True  # ready from the next list on
                if eps:
                    # A name no pod can have, which the driver would put
                    # in a request path: it must be ignored.
                    eps.insert(0, {"addresses": ["10.9.0.99"],
                                   "conditions": {"ready": True},
                                   "targetRef": {"kind": "Pod",
                                                 "name": "x/../evil?y=\u001b"}})
            items = [{"metadata": {"name": SERVICE + "-abcde", "labels": {
                "kubernetes.io/service-name": SERVICE}},
                "addressType": "IPv6" if ADDRS and ":" in ADDRS[0]
                else "IPv4", "endpoints": eps,
                "ports": [{"name": "http", "port": PORT, "protocol": "TCP"}]}]
            return self.reply(200, {"kind": "EndpointSliceList",
                                    "apiVersion": "discovery.k8s.io/v1",
                                    "items": items if eps else []})
        self.reply(404, {"kind": "Status", "code": 404})

    def do_POST(self):
        if urlparse(self.path).path != "/debug":
            return self.reply(404, {"kind": "Status", "code": 404})
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if "replicas" in body:
            state["replicas"] = int(body["replicas"])
            reconcile()
            for p in state["pods"]:
                p["ready"] = True
        state["fail_lists"] = int(body.get("fail_lists", 0))
        state["requests"] = []
        self.reply(200, state)

    def do_PATCH(self):
        u = urlparse(self.path)
        if not self.authorized():
            return
        if self.headers.get("Content-Type") != "application/merge-patch+json":
            return self.reply(415, {"kind": "Status", "code": 415})
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        state["requests"].append("PATCH " + u.path + " " + json.dumps(body))
        if u.path == "/apis/apps/v1/namespaces/%s/deployments/%s/scale" % (
                NS, DEPLOY):
            state["replicas"] = int(body["spec"]["replicas"])
            reconcile()
            return self.reply(200, scale_obj())
        pre = "/api/v1/namespaces/%s/pods/" % NS
        if u.path.startswith(pre):
            for p in state["pods"]:
                if p["name"] == u.path[len(pre):]:
                    p["annotations"].update(body["metadata"]["annotations"])
                    return self.reply(200, {"kind": "Pod", "metadata": {
                        "name": p["name"], "annotations": p["annotations"]}})
        self.reply(404, {"kind": "Status", "code": 404})


srv = HTTPServer(("127.0.0.1", 0), Handler)
print(srv.server_address[1], flush=True)
srv.serve_forever()
